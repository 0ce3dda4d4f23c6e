'use strict';
// Entity tags of accounts and the If-Match / If-None-Match rules.

const crypto = require('node:crypto');
const { Problem } = require('./http');

function etagOf(account) {
  const digest = crypto.createHash('sha256').update(`${account.id}:${account.version}`).digest('hex');
  return `"${digest.slice(0, 16)}"`;
}

// A change to an account needs If-Match with its current entity tag.
function requireMatch(ctx, account) {
  const given = ctx.req.headers['if-match'];
  if (given === undefined) {
    throw new Problem(428, 'precondition-required', 'Changing an account requires an If-Match header.');
  }
  if (given !== etagOf(account)) {
    throw new Problem(412, 'precondition-failed', 'The account has changed since you read it.', {},
      { ETag: etagOf(account) });
  }
}

function notModified(ctx, account) {
  return ctx.req.headers['if-none-match'] === etagOf(account);
}

module.exports = { etagOf, requireMatch, notModified };
