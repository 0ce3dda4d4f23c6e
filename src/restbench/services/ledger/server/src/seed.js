'use strict';
// The seed state that POST /__reset restores. Also documented in openapi.json and README.md.

const crypto = require('node:crypto');
const { transferFee } = require('./money');

const USERS = [
  { username: 'alice', displayName: 'Alice Martin', password: 'alice-pass-1' },
  { username: 'bob', displayName: 'Bob Keller', password: 'bob-pass-2' },
  { username: 'carol', displayName: 'Carol Ito', password: 'carol-pass-3' },
];

const ACCOUNTS = [
  { id: 'acc_001', owner: 'alice', name: 'Alice main', currency: 'EUR', balance: 100000, status: 'open' },
  { id: 'acc_002', owner: 'alice', name: 'Alice travel', currency: 'USD', balance: 25000, status: 'open' },
  { id: 'acc_003', owner: 'alice', name: 'Alice savings', currency: 'EUR', balance: 0, status: 'open' },
  { id: 'acc_004', owner: 'alice', name: 'Alice old', currency: 'EUR', balance: 0, status: 'closed' },
  { id: 'acc_101', owner: 'bob', name: 'Bob main', currency: 'EUR', balance: 50000, status: 'open' },
  { id: 'acc_102', owner: 'bob', name: 'Bob yen', currency: 'JPY', balance: 80000, status: 'open' },
];

// Twelve settled payments from alice's main account to bob's, 1.00 EUR to 12.00 EUR, with their fees.
function seedTransfers() {
  const transfers = [];
  for (let n = 1; n <= 12; n += 1) {
    transfers.push({
      id: `tr_${String(n).padStart(4, '0')}`,
      seq: n,
      fromAccount: 'acc_001',
      toAccount: 'acc_101',
      amount: n * 100,
      currency: 'EUR',
      fee: transferFee(n * 100, false),
      creditAmount: n * 100,
      creditCurrency: 'EUR',
      rate: '1.000000',
      status: 'settled',
      description: `Seed payment ${n}`,
    });
  }
  return transfers;
}

function passwordHash(password, salt) {
  return crypto.createHash('sha256').update(`${salt}:${password}`).digest('hex');
}

function seedState() {
  const users = new Map();
  for (const user of USERS) {
    const salt = `salt-${user.username}`;
    users.set(user.username, {
      username: user.username,
      displayName: user.displayName,
      salt,
      passwordHash: passwordHash(user.password, salt),
    });
  }
  const accounts = new Map(ACCOUNTS.map((account) => [account.id, { ...account, version: 1 }]));
  const transfers = new Map(seedTransfers().map((transfer) => [transfer.id, transfer]));
  return {
    users,
    accounts,
    transfers,
    deposits: new Map(),
    tokens: new Map(),
    idempotency: new Map(),
    quoteWindows: new Map(),
    nextAccountNumber: 200,
    nextTransferSeq: 13,
    nextDepositNumber: 1,
  };
}

module.exports = { seedState, passwordHash };
