'use strict';
// Transfers: created pending (the payer is debited amount + fee at once), then confirmed
// (the payee is credited, converted to its currency) or cancelled (the payer is refunded).

const { Problem, sendJson, jsonBody, validationFailed } = require('./http');
const { authenticate } = require('./auth');
const { requireKey, idempotent } = require('./idempotency');
const { ownAccount } = require('./accounts');
const { isAmount, transferFee, convert, rateMicro, formatRate, MAX_AMOUNT } = require('./money');

function transferView(transfer) {
  const { seq, ...view } = transfer;
  return view;
}

function checkOpen(account) {
  if (account.status === 'closed') {
    throw new Problem(409, 'account-closed', `Account ${account.id} is closed.`);
  }
}

async function create(ctx) {
  const username = authenticate(ctx);
  const key = requireKey(ctx);
  const body = await jsonBody(ctx.req);
  idempotent(ctx, username, key, body, () => {
    const errors = {};
    if (typeof body.fromAccount !== 'string') errors.fromAccount = 'must be an account id';
    if (typeof body.toAccount !== 'string') errors.toAccount = 'must be an account id';
    else if (body.toAccount === body.fromAccount) errors.toAccount = 'must differ from fromAccount';
    if (!isAmount(body.amount)) errors.amount = `must be an integer from 1 to ${MAX_AMOUNT}`;
    if (body.description !== undefined && (typeof body.description !== 'string' || body.description.length > 140)) {
      errors.description = 'must be a string of at most 140 characters';
    }
    if (Object.keys(errors).length > 0) throw validationFailed(errors);

    const from = ownAccount(ctx, username, body.fromAccount);
    const to = ctx.state.accounts.get(body.toAccount);
    if (to === undefined) throw new Problem(404, 'not-found', `Account ${body.toAccount} not found.`);
    checkOpen(from);
    checkOpen(to);
    const fee = transferFee(body.amount, from.owner === to.owner);
    const debit = body.amount + fee;
    if (from.balance < debit) {
      throw new Problem(409, 'insufficient-funds',
        `Account ${from.id} holds ${from.balance} minor units; this transfer needs ${debit}.`);
    }
    from.balance -= debit;
    from.version += 1;
    const seq = ctx.state.nextTransferSeq;
    ctx.state.nextTransferSeq += 1;
    const transfer = {
      id: `tr_${String(seq).padStart(4, '0')}`,
      seq,
      fromAccount: from.id,
      toAccount: to.id,
      amount: body.amount,
      currency: from.currency,
      fee,
      creditAmount: convert(body.amount, from.currency, to.currency),
      creditCurrency: to.currency,
      rate: formatRate(rateMicro(from.currency, to.currency)),
      status: 'pending',
      description: body.description === undefined ? '' : body.description,
    };
    ctx.state.transfers.set(transfer.id, transfer);
    return { status: 201, body: transferView(transfer), headers: { Location: `/v1/transfers/${transfer.id}` } };
  });
}

// A transfer the caller pays or receives; any other is answered as if it did not exist.
function visibleTransfer(ctx, username, id) {
  const transfer = ctx.state.transfers.get(id);
  if (transfer !== undefined) {
    const from = ctx.state.accounts.get(transfer.fromAccount);
    const to = ctx.state.accounts.get(transfer.toAccount);
    if (from.owner === username || to.owner === username) return transfer;
  }
  throw new Problem(404, 'not-found', `Transfer ${id} not found.`);
}

function get(ctx) {
  const username = authenticate(ctx);
  sendJson(ctx.res, 200, transferView(visibleTransfer(ctx, username, ctx.params.id)));
}

// The checks shared by confirm and cancel: only the payer, only a pending transfer.
function pendingOfPayer(ctx, action) {
  const username = authenticate(ctx);
  const transfer = visibleTransfer(ctx, username, ctx.params.id);
  const from = ctx.state.accounts.get(transfer.fromAccount);
  if (from.owner !== username) {
    throw new Problem(403, 'not-payer', `Only the owner of ${from.id} may ${action} this transfer.`);
  }
  if (transfer.status !== 'pending') {
    throw new Problem(409, 'invalid-transition',
      `Transfer ${transfer.id} is ${transfer.status}; only a pending transfer can be ${action}ed.`);
  }
  return transfer;
}

function confirm(ctx) {
  const transfer = pendingOfPayer(ctx, 'confirm');
  const to = ctx.state.accounts.get(transfer.toAccount);
  checkOpen(to);
  to.balance += transfer.creditAmount;
  to.version += 1;
  transfer.status = 'settled';
  sendJson(ctx.res, 200, transferView(transfer));
}

function cancel(ctx) {
  const transfer = pendingOfPayer(ctx, 'cancel');
  const from = ctx.state.accounts.get(transfer.fromAccount);
  from.balance += transfer.amount + transfer.fee;
  from.version += 1;
  transfer.status = 'cancelled';
  sendJson(ctx.res, 200, transferView(transfer));
}

module.exports = { create, get, confirm, cancel, transferView };
