'use strict';
// Exchange-rate quotes, limited per user.

const { sendJson, validationFailed } = require('./http');
const { authenticate } = require('./auth');
const { isCurrency, convert, rateMicro, formatRate, MAX_AMOUNT } = require('./money');
const { takeQuota } = require('./ratelimit');

function quote(ctx) {
  const username = authenticate(ctx);
  const remaining = takeQuota(ctx, username);
  const from = ctx.query.get('from');
  const to = ctx.query.get('to');
  const amountText = ctx.query.get('amount');
  const errors = {};
  if (!isCurrency(from)) errors.from = 'must be one of EUR, USD, JPY';
  if (!isCurrency(to)) errors.to = 'must be one of EUR, USD, JPY';
  const amount = amountText !== null && /^[0-9]{1,9}$/.test(amountText) ? Number(amountText) : 0;
  if (amount < 1 || amount > MAX_AMOUNT) errors.amount = `must be an integer from 1 to ${MAX_AMOUNT}`;
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  sendJson(ctx.res, 200, {
    from, to, amount, converted: convert(amount, from, to), rate: formatRate(rateMicro(from, to)),
  }, { 'RateLimit-Limit': '5', 'RateLimit-Remaining': String(remaining) });
}

module.exports = { quote };
