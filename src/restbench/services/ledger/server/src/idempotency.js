'use strict';
// Idempotency keys: a POST repeated with the same key and the same request is answered from
// the stored first answer and has no second effect; the same key with another request is refused.

const { Problem, sendJson } = require('./http');

const KEY_PATTERN = /^[\x21-\x7e]{1,64}$/;

// JSON with object members in sorted order, so that member order does not change a request.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

function requireKey(ctx) {
  const key = ctx.req.headers['idempotency-key'];
  if (key === undefined) {
    throw new Problem(400, 'idempotency-key-missing', 'This request needs an Idempotency-Key header.');
  }
  if (!KEY_PATTERN.test(key)) {
    throw new Problem(400, 'idempotency-key-missing', 'An Idempotency-Key is 1 to 64 visible ASCII characters.');
  }
  return key;
}

// Runs `perform` (which returns {status, body, headers}) at most once per user and key.
// Only successful answers are stored: a refused request may be retried with the same key.
function idempotent(ctx, username, key, body, perform) {
  const scope = `${username}\n${key}`;
  const fingerprint = `${ctx.req.method} ${ctx.path} ${canonical(body)}`;
  const saved = ctx.state.idempotency.get(scope);
  if (saved !== undefined) {
    if (saved.fingerprint !== fingerprint) {
      throw new Problem(422, 'idempotency-key-reused',
        'This Idempotency-Key was already used with a different request.');
    }
    sendJson(ctx.res, saved.status, saved.body, { ...saved.headers, 'Idempotent-Replayed': 'true' });
    return;
  }
  const answer = perform();
  if (answer.status >= 200 && answer.status < 300) {
    ctx.state.idempotency.set(scope, { fingerprint, ...answer });
  }
  sendJson(ctx.res, answer.status, answer.body, answer.headers);
}

module.exports = { requireKey, idempotent, canonical };
