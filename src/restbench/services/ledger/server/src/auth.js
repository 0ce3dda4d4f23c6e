'use strict';
// Login with a user name and password, bearer tokens, and who is calling.

const crypto = require('node:crypto');
const { Problem, sendJson, jsonBody, validationFailed } = require('./http');
const { passwordHash } = require('./seed');

const TOKEN_LIFETIME_S = 3600;

async function login(ctx) {
  const body = await jsonBody(ctx.req);
  const errors = {};
  if (typeof body.username !== 'string' || body.username === '') errors.username = 'must be a non-empty string';
  if (typeof body.password !== 'string' || body.password === '') errors.password = 'must be a non-empty string';
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  const user = ctx.state.users.get(body.username);
  if (!user || user.passwordHash !== passwordHash(body.password, user.salt)) {
    throw new Problem(401, 'invalid-credentials', 'The user name or password is wrong.');
  }
  const token = crypto.randomBytes(24).toString('hex');
  ctx.state.tokens.set(token, { username: user.username, expiresAt: Date.now() + TOKEN_LIFETIME_S * 1000 });
  sendJson(ctx.res, 200, { token, tokenType: 'Bearer', expiresIn: TOKEN_LIFETIME_S });
}

// The user name of the caller; a missing, malformed, unknown or expired token is a 401.
function authenticate(ctx) {
  const header = ctx.req.headers.authorization || '';
  const match = /^Bearer ([0-9a-f]{48})$/.exec(header);
  const session = match ? ctx.state.tokens.get(match[1]) : undefined;
  if (!session || session.expiresAt <= Date.now()) {
    throw new Problem(401, 'unauthenticated', 'A valid bearer token is required.', {},
      { 'WWW-Authenticate': 'Bearer realm="ledger"' });
  }
  return session.username;
}

function me(ctx) {
  const username = authenticate(ctx);
  const user = ctx.state.users.get(username);
  sendJson(ctx.res, 200, { username: user.username, displayName: user.displayName });
}

module.exports = { login, authenticate, me };
