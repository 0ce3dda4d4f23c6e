'use strict';
// restbench's reach probe for a Node.js service (serving/node_reach.py), loaded with
// `node --require` in servers of the original only. It turns on V8's block coverage before the
// service's own code is compiled and answers one question on a Unix socket, once per test:
// which of the planned edits did the code run since the last question touch?
//
// Block coverage with counts: each take reports the functions and blocks run since the previous
// take (a function that did not run is left out, a block that did not run has count 0). A
// position's count is that of the innermost range holding it; functions seen in earlier takes
// and left out of this one count 0 there. Nothing here changes what the service computes.

const fs = require('node:fs');
const net = require('node:net');
const vm = require('node:vm');

const CJS_PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname'];

function start() {
  const planFile = process.env.RESTBENCH_REACH;
  delete process.env.RESTBENCH_REACH; // the service never sees it
  if (!planFile) return;
  const plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  const inspector = require('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) => {
    let answer;
    let failure;
    session.post(method, params, (error, result) => { failure = error; answer = result; });
    if (failure || answer === undefined) throw failure || new Error(`${method} did not answer at once`);
    return answer;
  };
  post('Profiler.enable');
  // Counts, not binary coverage: in binary mode V8 reports a block only the first time it runs.
  post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });

  // An edit whose file does not compile makes the mutant fail to start: reached by every test.
  const broken = new Set();
  for (const edit of plan.edits) {
    try {
      vm.compileFunction(edit.source, CJS_PARAMETERS, { filename: edit.url });
    } catch (error) {
      broken.add(edit.id);
    }
    delete edit.source;
  }
  const functionsSeen = new Map(); // url -> Map("start:end" -> [start, end])

  function reached() {
    const scripts = new Map();
    for (const script of post('Profiler.takePreciseCoverage').result) {
      if (!script.url.startsWith('file:')) continue;
      scripts.set(script.url, script.functions);
      const known = functionsSeen.get(script.url) || new Map();
      for (const fn of script.functions) {
        const whole = fn.ranges[0];
        known.set(`${whole.startOffset}:${whole.endOffset}`, [whole.startOffset, whole.endOffset]);
      }
      functionsSeen.set(script.url, known);
    }
    const found = [];
    for (const edit of plan.edits) {
      const known = functionsSeen.get(edit.url);
      // a file no take has shown yet: unknown, so reached
      if (broken.has(edit.id) || known === undefined || touches(edit, scripts.get(edit.url) || [], known)) {
        found.push(edit.id);
      }
    }
    return found;
  }

  const server = net.createServer((connection) => {
    let pending = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk) => {
      pending += chunk;
      let newline;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const command = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        const answer = command === 'take' ? { reached: reached() } : { error: `unknown command ${command}` };
        connection.write(`${JSON.stringify(answer)}\n`);
      }
    });
    connection.on('error', () => {});
  });
  server.listen(plan.socket);
  server.unref(); // the service's own handles decide when it exits
}

// Every range of the take, then the functions seen in earlier takes and left out of this one
// (they did not run: count 0). Each is [start, end, count, whether it is a whole function].
function rangesOf(functions, known) {
  const ranges = [];
  const reported = new Set();
  for (const fn of functions) {
    reported.add(`${fn.ranges[0].startOffset}:${fn.ranges[0].endOffset}`);
    // An async function resumed after an await, called in an earlier take, has count 0 and runs
    // blocks: its own range counts as run then.
    const runs = Math.max(...fn.ranges.map((range) => range.count));
    fn.ranges.forEach((range, i) => ranges.push(
      [range.startOffset, range.endOffset, i === 0 ? runs : range.count, i === 0]));
  }
  for (const [key, [startOffset, endOffset]] of known) {
    if (!reported.has(key)) ranges.push([startOffset, endOffset, 0, true]);
  }
  return ranges;
}

function touches(edit, functions, known) {
  const ranges = rangesOf(functions, known);
  if (!edit.scope) return edit.ranges.some(([s, e]) => spanRan(s, e, ranges));
  // The edit changes a scope (a declaration): reached when the innermost function around all of
  // it, not starting inside it, ran. None around it: unknown, so reached.
  const first = Math.min(...edit.ranges.map(([s]) => s));
  const last = Math.max(...edit.ranges.map(([, e]) => e));
  const around = ranges.filter(([start, end, , whole]) => whole && start < first && last <= end);
  return around.length === 0 || shortest(around)[2] > 0;
}

function shortest(ranges) {
  return ranges.reduce((best, range) => (range[1] - range[0] < best[1] - best[0] ? range : best));
}

// Whether any position in [s, e) has an innermost range with a count above 0. Ranges nest, so
// the innermost one holding a piece is the shortest.
function spanRan(s, e, ranges) {
  const inside = ranges.filter(([start, end]) => start < e && s < end);
  const cuts = new Set([s, e]);
  for (const [start, end] of inside) {
    if (start > s && start < e) cuts.add(start);
    if (end > s && end < e) cuts.add(end);
  }
  const points = [...cuts].sort((a, b) => a - b);
  for (let i = 0; i + 1 < points.length; i += 1) {
    const [from, to] = [points[i], points[i + 1]];
    const holding = inside.filter(([start, end]) => start <= from && to <= end);
    const innermost = holding.length ? shortest(holding) : null;
    if (innermost === null || innermost[2] > 0) return true; // outside every range: unknown
  }
  return false;
}

try {
  start();
} catch (error) {
  // the probe never stops the service: the harness then runs every mutant
  process.stderr.write(`restbench reach probe off: ${error && error.message}\n`);
}
