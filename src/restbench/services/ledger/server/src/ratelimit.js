'use strict';
// A fixed window per user: at most QUOTA requests in the WINDOW_MS after the window's first one.

const { Problem } = require('./http');

const QUOTA = 5;
const WINDOW_MS = 60000;

// Counts one request of `username`; returns how many remain in the window, or throws a 429.
function takeQuota(ctx, username) {
  const now = Date.now();
  let window = ctx.state.quoteWindows.get(username);
  if (window === undefined || now - window.start >= WINDOW_MS) {
    window = { start: now, count: 0 };
    ctx.state.quoteWindows.set(username, window);
  }
  if (window.count >= QUOTA) {
    const retryAfter = Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000));
    throw new Problem(429, 'rate-limited', `At most ${QUOTA} quotes per minute; try again later.`, {},
      { 'Retry-After': String(retryAfter) });
  }
  window.count += 1;
  return QUOTA - window.count;
}

module.exports = { takeQuota, QUOTA, WINDOW_MS };
