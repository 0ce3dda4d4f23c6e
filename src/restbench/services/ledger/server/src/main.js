'use strict';
// The ledger service: an HTTP server on 127.0.0.1:$PORT with its state in memory.
// POST /__reset restores the seed state; GET /health answers when the server is up.

const http = require('node:http');
const { URL } = require('node:url');
const { Problem, sendJson, sendProblem, sendEmpty } = require('./http');
const { match } = require('./routes');
const { seedState } = require('./seed');

const state = { current: seedState() };

async function handle(req, res) {
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname === '/__reset' && req.method === 'POST') {
    state.current = seedState();
    sendEmpty(res, 204);
    return;
  }
  if (url.pathname === '/health' && req.method === 'GET') {
    sendJson(res, 200, { status: 'ok' });
    return;
  }
  const route = match(req.method, url.pathname);
  if (route === null) {
    throw new Problem(404, 'not-found', `No route for ${req.method} ${url.pathname}.`);
  }
  if (route.allowed) {
    throw new Problem(405, 'method-not-allowed', `${url.pathname} does not support ${req.method}.`, {},
      { Allow: route.allowed.join(', ') });
  }
  const ctx = { req, res, state: state.current, path: url.pathname, query: url.searchParams, params: route.params };
  await route.handler(ctx);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((error) => {
    if (error instanceof Problem) {
      sendProblem(res, error);
      return;
    }
    process.stderr.write(`${error.stack}\n`);
    if (!res.headersSent) sendProblem(res, new Problem(500, 'internal-error', 'The server failed to answer.'));
  });
});

server.keepAliveTimeout = 60000;
const port = Number(process.env.PORT || 8000);
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`ledger listening on http://127.0.0.1:${port}\n`);
});

function stop() {
  server.close();
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
