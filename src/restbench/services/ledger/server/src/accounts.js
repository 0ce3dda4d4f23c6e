'use strict';
// Accounts: listing, opening, reading, renaming, closing, and deposits.

const { Problem, sendJson, sendEmpty, jsonBody, validationFailed } = require('./http');
const { authenticate } = require('./auth');
const { etagOf, requireMatch, notModified } = require('./etag');
const { requireKey, idempotent } = require('./idempotency');
const { isCurrency, isAmount, MAX_AMOUNT } = require('./money');

function accountView(account) {
  return {
    id: account.id,
    owner: account.owner,
    name: account.name,
    currency: account.currency,
    balance: account.balance,
    status: account.status,
  };
}

// An account of the caller; another owner's account is answered as if it did not exist.
function ownAccount(ctx, username, id) {
  const account = ctx.state.accounts.get(id);
  if (account === undefined || account.owner !== username) {
    throw new Problem(404, 'not-found', `Account ${id} not found.`);
  }
  return account;
}

function checkName(name, errors) {
  if (typeof name !== 'string' || name.trim().length < 1 || name.trim().length > 60) {
    errors.name = 'must be a string of 1 to 60 characters';
  }
}

function list(ctx) {
  const username = authenticate(ctx);
  const items = [...ctx.state.accounts.values()]
    .filter((account) => account.owner === username)
    .sort((a, b) => a.id.localeCompare(b.id))
    .map(accountView);
  sendJson(ctx.res, 200, { items });
}

async function create(ctx) {
  const username = authenticate(ctx);
  const body = await jsonBody(ctx.req);
  const errors = {};
  checkName(body.name, errors);
  if (!isCurrency(body.currency)) errors.currency = 'must be one of EUR, USD, JPY';
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  const id = `acc_${ctx.state.nextAccountNumber}`;
  ctx.state.nextAccountNumber += 1;
  const account = {
    id, owner: username, name: body.name.trim(), currency: body.currency, balance: 0, status: 'open', version: 1,
  };
  ctx.state.accounts.set(id, account);
  sendJson(ctx.res, 201, accountView(account), { Location: `/v1/accounts/${id}`, ETag: etagOf(account) });
}

function get(ctx) {
  const username = authenticate(ctx);
  const account = ownAccount(ctx, username, ctx.params.id);
  if (notModified(ctx, account)) {
    sendEmpty(ctx.res, 304, { ETag: etagOf(account) });
    return;
  }
  sendJson(ctx.res, 200, accountView(account), { ETag: etagOf(account) });
}

async function rename(ctx) {
  const username = authenticate(ctx);
  const account = ownAccount(ctx, username, ctx.params.id);
  const body = await jsonBody(ctx.req);
  const errors = {};
  checkName(body.name, errors);
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  requireMatch(ctx, account);
  if (account.status === 'closed') {
    throw new Problem(409, 'account-closed', `Account ${account.id} is closed.`);
  }
  account.name = body.name.trim();
  account.version += 1;
  sendJson(ctx.res, 200, accountView(account), { ETag: etagOf(account) });
}

function close(ctx) {
  const username = authenticate(ctx);
  const account = ownAccount(ctx, username, ctx.params.id);
  requireMatch(ctx, account);
  if (account.status === 'closed') {
    throw new Problem(409, 'account-closed', `Account ${account.id} is closed.`);
  }
  if (account.balance !== 0) {
    throw new Problem(409, 'balance-not-zero', `Account ${account.id} still holds ${account.balance} minor units.`);
  }
  account.status = 'closed';
  account.version += 1;
  sendJson(ctx.res, 200, accountView(account), { ETag: etagOf(account) });
}

async function deposit(ctx) {
  const username = authenticate(ctx);
  const account = ownAccount(ctx, username, ctx.params.id);
  const key = requireKey(ctx);
  const body = await jsonBody(ctx.req);
  idempotent(ctx, username, key, body, () => {
    if (!isAmount(body.amount)) {
      throw validationFailed({ amount: `must be an integer from 1 to ${MAX_AMOUNT}` });
    }
    if (account.status === 'closed') {
      throw new Problem(409, 'account-closed', `Account ${account.id} is closed.`);
    }
    account.balance += body.amount;
    account.version += 1;
    const id = `dep_${String(ctx.state.nextDepositNumber).padStart(4, '0')}`;
    ctx.state.nextDepositNumber += 1;
    const record = { id, account: account.id, amount: body.amount, currency: account.currency, balanceAfter: account.balance };
    ctx.state.deposits.set(id, record);
    return { status: 201, body: record, headers: {} };
  });
}

module.exports = { list, create, get, rename, close, deposit, ownAccount, accountView };
