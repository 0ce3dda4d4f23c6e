'use strict';
// Cursor pagination of an account's transfers: newest first, by creation order.

const { sendJson, validationFailed } = require('./http');
const { authenticate } = require('./auth');
const { ownAccount } = require('./accounts');
const { transferView } = require('./transfers');

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;

// A cursor names the last transfer of a page; it is opaque to clients.
function encodeCursor(seq) {
  return Buffer.from(`after:${seq}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor) {
  const match = /^after:([1-9][0-9]{0,8})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : null;
}

function parseLimit(text) {
  if (text === null) return DEFAULT_LIMIT;
  if (!/^[0-9]{1,3}$/.test(text)) return null;
  const limit = Number(text);
  return limit >= 1 && limit <= MAX_LIMIT ? limit : null;
}

function accountTransfers(ctx) {
  const username = authenticate(ctx);
  const account = ownAccount(ctx, username, ctx.params.id);
  const errors = {};
  const limit = parseLimit(ctx.query.get('limit'));
  if (limit === null) errors.limit = `must be an integer from 1 to ${MAX_LIMIT}`;
  const cursorText = ctx.query.get('cursor');
  const after = cursorText === null ? Infinity : decodeCursor(cursorText);
  if (after === null) errors.cursor = 'is not a cursor this service issued';
  if (Object.keys(errors).length > 0) throw validationFailed(errors);

  const matching = [...ctx.state.transfers.values()]
    .filter((t) => (t.fromAccount === account.id || t.toAccount === account.id) && t.seq < after)
    .sort((a, b) => b.seq - a.seq);
  const page = matching.slice(0, limit);
  const hasMore = matching.length > limit;
  const nextCursor = hasMore ? encodeCursor(page[page.length - 1].seq) : null;
  sendJson(ctx.res, 200, { items: page.map(transferView), nextCursor });
}

module.exports = { accountTransfers };
