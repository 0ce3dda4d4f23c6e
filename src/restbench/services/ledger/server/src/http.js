'use strict';
// Reading requests and writing JSON answers and problem details (RFC 9457).

const MAX_BODY_BYTES = 64 * 1024;

const TITLES = {
  'unauthenticated': 'Authentication required',
  'invalid-credentials': 'Invalid credentials',
  'not-found': 'Resource not found',
  'method-not-allowed': 'Method not allowed',
  'malformed-json': 'Malformed JSON body',
  'validation-failed': 'Validation failed',
  'idempotency-key-missing': 'Idempotency key missing',
  'idempotency-key-reused': 'Idempotency key reused',
  'precondition-required': 'Precondition required',
  'precondition-failed': 'Precondition failed',
  'insufficient-funds': 'Insufficient funds',
  'account-closed': 'Account closed',
  'balance-not-zero': 'Balance not zero',
  'invalid-transition': 'Invalid state transition',
  'not-payer': 'Only the payer may do this',
  'rate-limited': 'Too many requests',
  'internal-error': 'Internal server error',
};

class Problem extends Error {
  constructor(status, type, detail, extra = {}, headers = {}) {
    super(detail);
    this.status = status;
    this.type = type;
    this.detail = detail;
    this.extra = extra;
    this.headers = headers;
  }
}

function sendJson(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function problemBody(problem) {
  return {
    type: `https://ledger.example/problems/${problem.type}`,
    title: TITLES[problem.type],
    status: problem.status,
    detail: problem.detail,
    ...problem.extra,
  };
}

function sendProblem(res, problem) {
  const text = JSON.stringify(problemBody(problem));
  res.writeHead(problem.status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(text),
    ...problem.headers,
  });
  res.end(text);
}

function sendEmpty(res, status, headers = {}) {
  res.writeHead(status, headers);
  res.end();
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Problem(400, 'malformed-json', 'The request body is larger than 64 KiB.'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// The JSON object of a request body; anything else is a malformed-json problem.
async function jsonBody(req) {
  const text = await readBody(req);
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Problem(400, 'malformed-json', 'The request body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Problem(400, 'malformed-json', 'The request body must be a JSON object.');
  }
  return value;
}

function validationFailed(errors) {
  return new Problem(400, 'validation-failed', 'One or more fields are invalid.', { errors });
}

module.exports = { Problem, sendJson, sendProblem, sendEmpty, jsonBody, validationFailed, problemBody };
