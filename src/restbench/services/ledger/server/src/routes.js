'use strict';
// Every route of the public API, one per line (tests compare this table with openapi.json).

const auth = require('./auth');
const accounts = require('./accounts');
const transfers = require('./transfers');
const pagination = require('./pagination');
const fx = require('./fx');

const ROUTES = [
  ['POST', '/v1/login', auth.login],
  ['GET', '/v1/me', auth.me],
  ['GET', '/v1/accounts', accounts.list],
  ['POST', '/v1/accounts', accounts.create],
  ['GET', '/v1/accounts/{id}', accounts.get],
  ['PATCH', '/v1/accounts/{id}', accounts.rename],
  ['POST', '/v1/accounts/{id}/close', accounts.close],
  ['POST', '/v1/accounts/{id}/deposits', accounts.deposit],
  ['GET', '/v1/accounts/{id}/transfers', pagination.accountTransfers],
  ['POST', '/v1/transfers', transfers.create],
  ['GET', '/v1/transfers/{id}', transfers.get],
  ['POST', '/v1/transfers/{id}/confirm', transfers.confirm],
  ['POST', '/v1/transfers/{id}/cancel', transfers.cancel],
  ['GET', '/v1/fx/quote', fx.quote],
];

function compile(template) {
  const names = [];
  const pattern = template.replace(/\{(\w+)\}/g, (_, name) => {
    names.push(name);
    return '([^/]+)';
  });
  return { regex: new RegExp(`^${pattern}$`), names };
}

const COMPILED = ROUTES.map(([method, template, handler]) => ({ method, template, handler, ...compile(template) }));

// The route for a method and path: {handler, params}, {allowed} when only the method is wrong, or null.
function match(method, path) {
  const allowed = [];
  for (const route of COMPILED) {
    const found = route.regex.exec(path);
    if (!found) continue;
    if (route.method !== method) {
      allowed.push(route.method);
      continue;
    }
    const params = {};
    route.names.forEach((name, i) => { params[name] = decodeURIComponent(found[i + 1]); });
    return { handler: route.handler, params };
  }
  return allowed.length > 0 ? { allowed } : null;
}

module.exports = { ROUTES, match };
