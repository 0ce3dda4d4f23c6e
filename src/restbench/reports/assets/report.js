"use strict";
// The restbench report page: everything is built from the JSON embedded in #report-data.
(function () {
  performance.mark("restbench-start");
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  performance.mark("restbench-parsed");

  // el("td", {class: "x"}, "text", child, ...): DOM nodes; text never becomes markup.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    return add(node, ...children);
  }
  // Appends children (nested arrays flattened; null, undefined and false left out).
  function add(node, ...children) {
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  function fill(node, ...children) {
    node.replaceChildren();
    return add(node, ...children);
  }

  const pct = (v) => (v === null || v === undefined ? "n/a" : (v * 100).toFixed(1) + "%");
  function usd(v) {
    if (v === null || v === undefined) return "";
    return v.toFixed(6);  // as the terminal shows costs (restbench.llm.prices.usd)
  }
  const FORMATS = {
    text: (v) => (v === null || v === undefined ? "" : String(v)),
    int: (v) => (v === null || v === undefined ? "" : String(v)),
    num: (v) => (v === null || v === undefined ? "" : (+v).toFixed(Number.isInteger(v) ? 0 : 2)),
    pct: pct,
    pp: (v) => (v === null || v === undefined ? "" : (v * 100).toFixed(1) + "pp"),
    usd: usd,
    // v is the interval's low end (a column X_ci95_low); its high end is X_ci95_high
    ci: (v, row, key) => {
      const high = row[key.replace(/_low$/, "_high")];
      if (v === null || v === undefined || high === null || high === undefined) return "";
      return (v * 100).toFixed(0) + "–" + (high * 100).toFixed(0) + "%";
    },
  };

  function header() {
    const runs = DATA.runs.map((r) => r.name).concat(DATA.agent_eval.map((r) => r.name),
      DATA.grade.map((r) => r.name));
    document.getElementById("meta").textContent = "restbench " + DATA.version + " · " +
      DATA.generated_at + " · " + runs.join(", ");
    const box = document.getElementById("runs");
    for (const run of DATA.runs) {
      const config = run.config || {};
      const generators = (config.generators || []).map((g) => g.name +
        (Object.keys(g.args || {}).length ? " " + JSON.stringify(g.args) : "")).join(", ");
      add(box, el("p", {class: "run"}, el("b", {}, run.name), " (" + run.path + "): ",
        run.tests + " tests; generators " + (generators || "?") + "; models " +
        ((config.models || []).join(", ") || "none") + "; repetitions " +
        (config.repetitions || 1) + "; cost $" + usd((run.total_cost || {}).usd || 0)));
      for (const problem of run.problems) add(box, el("p", {class: "problem"}, problem));
    }
  }

  // ---- score table ----------------------------------------------------------------------
  let sortState = {key: null, dir: 1};
  function scoreTable() {
    const table = document.getElementById("score-table");
    const columns = DATA.columns;
    const sortKey = (col) => col.key;
    function draw() {
      const rows = DATA.scores.slice();
      if (sortState.key) {
        rows.sort((a, b) => {
          const x = a[sortState.key], y = b[sortState.key];
          if (x === y) return 0;
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : 1) * sortState.dir;
        });
      }
      fill(table, 
        el("thead", {}, el("tr", {}, columns.map((col) => el("th", {
          class: (col.format === "text" ? "text " : "") + (sortKey(col) === sortState.key ?
            (sortState.dir > 0 ? "sorted-asc" : "sorted-desc") : ""),
          "data-key": col.key,
          onclick: () => {
            const key = sortKey(col);
            sortState = {key: key, dir: sortState.key === key ? -sortState.dir : 1};
            draw();
          }}, col.label)))),
        el("tbody", {}, rows.map((row) => el("tr", {class: row.service === "all" ? "all" : ""},
          columns.map((col) => el("td", {class: col.format === "text" ? "text" : ""},
            (FORMATS[col.format] || FORMATS.text)(row[col.key], row, col.key)))))));
    }
    if (!DATA.scores.length) {
      fill(table, el("tr", {}, el("td", {class: "text"}, "no run folder given")));
      return;
    }
    draw();
  }

  // ---- figures --------------------------------------------------------------------------
  function figures() {
    const grid = document.getElementById("figure-grid");
    for (const [id, figure] of Object.entries(DATA.figures)) {
      const div = el("div", {class: "figure", id: "figure-" + id});
      add(grid, div);
      Plotly.newPlot(div, figure.data || [], figure.layout || {},
        {responsive: true, displaylogo: false});
    }
    if (!Object.keys(DATA.figures).length) add(grid, el("p", {}, "no run folder given"));
    // the grid sizes its cells after the first drawing: fit each plot to its cell
    requestAnimationFrame(() => grid.querySelectorAll(".figure").forEach((div) =>
      Plotly.Plots.resize(div)));
  }

  // ---- kill matrix ----------------------------------------------------------------------
  const CELL_NAMES = {K: "killed", S: "survived", I: "invalid test", N: "not generated"};
  function matrixLabel(m) {
    return (DATA.runs.length > 1 ? m.run + ": " : "") + m.generator +
      (m.model === "-" ? "" : " / " + m.model) + " · " + m.variant + " · repetition " +
      m.repetition;
  }
  function matrix() {
    const select = document.getElementById("matrix-select");
    const body = document.getElementById("matrix-body");
    DATA.matrices.forEach((m, index) => select.append(el("option", {value: index},
      matrixLabel(m))));
    function draw() {
      const m = DATA.matrices[select.value];
      if (!m) { fill(body, el("p", {}, "no tests in these results")); return; }
      fill(body, ...m.rows.map(([service, requirement, cells]) => {
        const key = m.run + "|" + service + "|" + requirement;
        const mutants = (DATA.requirements[key] || {}).mutants || [];
        const killed = [...cells].filter((c) => c === "K").length;
        return el("div", {class: "matrix-row"},
          el("a", {class: "req", "data-key": key, href: "#drilldown",
            onclick: () => openRequirement(key)}, service + "/" + requirement),
          el("span", {class: "cells"}, [...cells].map((c, i) => el("span", {
            class: "cell " + c, title: ((mutants[i] || {}).id || "mutant " + (i + 1)) + ": " +
              CELL_NAMES[c], onclick: () => openRequirement(key)}))),
          el("span", {class: "hint"}, killed + "/" + cells.length));
      }));
    }
    select.addEventListener("change", draw);
    draw();
  }

  // ---- requirement list -----------------------------------------------------------------
  function requirementList() {
    const list = document.getElementById("requirement-list");
    const filter = document.getElementById("requirement-filter");
    const entries = Object.entries(DATA.requirements);
    function draw() {
      const needle = filter.value.toLowerCase();
      fill(list, ...entries.filter(([key, r]) => !needle ||
        (key + " " + r.title).toLowerCase().includes(needle)).map(([key, r]) =>
        el("div", {}, el("a", {class: "req-link", "data-key": key, href: "#drilldown",
          onclick: () => openRequirement(key)},
        (DATA.runs.length > 1 ? r.run + ": " : "") + r.service + "/" + r.id),
        " " + r.title + " (" + r.mutants.length + " mutants)")));
    }
    filter.addEventListener("input", draw);
    draw();
  }

  // ---- drill-down -----------------------------------------------------------------------
  async function inflate(text) {
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function diffBlock(text) {
    return el("pre", {class: "diff"}, text.split("\n").map((line) => el("span", {
      class: line.startsWith("+") && !line.startsWith("+++") ? "add" :
        line.startsWith("-") && !line.startsWith("---") ? "del" : ""}, line + "\n")));
  }

  function outcomeSpan(outcome) {
    return el("span", {class: "outcome-" + outcome}, outcome || "not run");
  }

  // The recorded headers (those a header parameter can carry), one per line, then the body.
  function requestText(exchange) {
    const headers = Object.entries(exchange.request_headers || {})
      .map(([name, value]) => name + ": " + value);
    return headers.concat([String(exchange.request_body || "").slice(0, 300)])
      .filter(Boolean).join("\n");
  }

  function exchangesTable(exchanges, total) {
    if (!exchanges.length) return el("p", {class: "hint"}, "no HTTP exchanges recorded");
    return el("div", {class: "trace"},
      el("table", {class: "exchanges"},
        el("tr", {}, ["#", "method", "url", "status", "request headers and body", "response body"]
          .map((h) => el("th", {class: "text"}, h))),
        exchanges.map((x, i) => el("tr", {},
          el("td", {}, i + 1), el("td", {class: "text"}, x.method),
          el("td", {class: "text"}, x.url), el("td", {}, x.status),
          el("td", {class: "text"}, requestText(x)),
          el("td", {class: "text"}, String(x.response_body || "").slice(0, 300))))),
      total > exchanges.length ? el("p", {class: "hint"},
        "first " + exchanges.length + " of " + total + " exchanges") : null);
  }

  // A reason's lines on one line: Node's assertion says what differed on its third line.
  function oneLine(text) {
    return text.split("\n").map((line) => line.trim()).filter(Boolean).join(" ");
  }

  function executionBlock(execution) {
    const open = execution.kind === "original";
    return el("details", {class: "execution", open: open},
      el("summary", {}, execution.implementation + " (" + execution.kind + "): ",
        outcomeSpan(execution.outcome), " " + execution.duration_s.toFixed(2) + " s ",
        execution.reason ? el("span", {class: "hint"}, oneLine(execution.reason)) : null),
      el("h5", {}, "HTTP exchanges"), exchangesTable(execution.exchanges,
        execution.exchanges_total),
      el("h5", {}, "test output"), el("pre", {class: "output"}, execution.output || ""));
  }

  function roundsBlock(details) {
    const rounds = details.rounds || [];
    if (!rounds.length) return null;
    return el("div", {class: "rounds"},
      el("h4", {}, "Refine rounds (stopped: " + (details.stopped || "?") + ", judge: " +
        (details.judge || "?") + ")"),
      rounds.map((r) => el("details", {class: "round"},
        el("summary", {}, "round " + r.round + ": ", outcomeSpan(r.outcome),
          " · verdict " + (r.verdict || "none") + (r.reason ? " · " + r.reason : "")),
        el("h5", {}, "code"), el("pre", {}, r.code || ""),
        el("h5", {}, "test output"), el("pre", {}, r.output || ""),
        el("h5", {}, "HTTP trace the judge saw"), el("pre", {}, r.trace || ""))));
  }

  function testBlock(test, chunk, requirement) {
    const executions = chunk.executions[test.code_sha] || [];
    const label = test.generator + (test.model === "-" ? "" : " / " + test.model) + " · " +
      test.variant + " · repetition " + test.repetition +
      (test.target === "original" ? "" : " · written against " + test.target);
    const verdict = test.status !== "ok" ? "not generated: " + test.error :
      !test.valid ? "invalid (does not pass on the original)" :
      "valid, kills " + test.killed.length + "/" + requirement.mutants.length;
    const body = el("div", {class: "test-body"});
    const block = el("details", {class: "test", "data-generator": test.generator,
      "data-model": test.model, "data-variant": test.variant},
    el("summary", {}, label, el("span", {class: "badge"}, verdict)), body);
    block.addEventListener("toggle", () => {
      if (!block.open || body.childElementCount) return;
      const cost = test.cost_usd ? " · $" + usd(test.cost_usd) + " · tokens " +
        test.input_tokens + "/" + test.output_tokens : "";
      add(body, 
        el("p", {class: "hint"}, "generated in " + test.wall_s.toFixed(2) + " s" + cost +
          (test.killed.length ? " · kills " + test.killed.join(", ") : "") +
          (test.overspecified ? " · fails on a benign variant (over-specified)" : "")),
        el("h4", {}, "Code"), el("pre", {class: "code"}, chunk.codes[test.code_sha] || ""),
        roundsBlock(test.details),
        el("h4", {}, "Outcome on every implementation"),
        executions.length ? el("table", {class: "outcomes"},
          el("tr", {}, ["implementation", "kind", "outcome", "reason"].map((h) =>
            el("th", {class: "text"}, h))),
          executions.map((e) => el("tr", {}, el("td", {class: "text"}, e.implementation),
            el("td", {class: "text"}, e.kind), el("td", {class: "text"}, outcomeSpan(e.outcome)),
            el("td", {class: "text"}, oneLine(e.reason || "").slice(0, 160)))))
          : el("p", {class: "hint"}, "not executed"),
        executions.map(executionBlock));
    });
    return block;
  }

  async function openRequirement(key) {
    const section = document.getElementById("drilldown");
    const requirement = DATA.requirements[key];
    section.hidden = false;
    fill(section, el("h2", {}, requirement.service + "/" + requirement.id + " " +
      requirement.title), el("p", {}, "loading…"));
    section.scrollIntoView();
    const chunk = await inflate(DATA.details[key]);
    const tests = chunk.tests;
    fill(section, 
      el("h2", {}, (DATA.runs.length > 1 ? requirement.run + ": " : "") + requirement.service +
        "/" + requirement.id + " " + requirement.title,
      el("a", {class: "badge", href: "#matrix", onclick: () => { section.hidden = true; }},
        "close")),
      el("p", {class: "hint"}, "operations: " + requirement.operations.join(", ")),
      el("div", {class: "wordings"},
        el("div", {}, el("h4", {}, "precise"), requirement.precise),
        el("div", {}, el("h4", {}, "vague"), requirement.vague)),
      el("h3", {}, "Mutants"),
      requirement.mutants.map((m) => el("details", {class: "mutant"},
        el("summary", {}, m.id + ": " + m.description), diffBlock(m.diff))),
      el("h3", {}, "Tests (" + tests.length + ")"),
      tests.length ? tests.map((t) => testBlock(t, chunk, requirement)) :
        el("p", {}, "no tests for this requirement"));
    section.scrollIntoView();  // again: filled, it is long enough to start at the top
  }

  // ---- agent-eval and grade ---------------------------------------------------------------
  function keyValues(object) {
    return el("table", {}, Object.entries(object).filter(([, v]) => typeof v !== "object" ||
      v === null).map(([k, v]) => el("tr", {}, el("th", {class: "text"}, k),
      el("td", {class: "text"}, typeof v === "number" && !Number.isInteger(v) ?
        v.toFixed(4) : String(v)))));
  }

  function agentEval() {
    const box = document.getElementById("agent-eval");
    if (!DATA.agent_eval.length) return;
    add(box, el("h2", {}, "Agent evaluation"));
    for (const folder of DATA.agent_eval) {
      add(box, el("h3", {}, folder.name), keyValues(folder.summary),
        el("h4", {}, "Cases"),
        folder.results.map((c) => el("details", {class: "case"},
          el("summary", {}, "#" + c.index + " " + c.test_name + " · keyword " +
            pct(c.score.keyword_score) + " · grounded " +
            pct(c.score.grounded_keyword_score) + " · tool calls " +
            pct(c.score.tool_call_score) +
            " · response " + pct(c.score.response_score) +
            (c.agent && c.agent.error ? " · error: " + c.agent.error : "")),
          el("pre", {}, JSON.stringify(c.details, null, 1)))));
    }
  }

  function grade() {
    const box = document.getElementById("grade");
    if (!DATA.grade.length) return;
    add(box, el("h2", {}, "Graded suites"));
    for (const folder of DATA.grade) {
      add(box, el("h3", {}, folder.name));
      for (const run of folder.runs) {
        add(box, el("h4", {}, run.dataset + " · " + run.model + " (" + run.file + ")"),
          keyValues(run.summary),
          run.cases.map((c) => el("details", {class: "case"},
            el("summary", {}, c.test_id + " " + (c.name || "") + " · " + c.status + " · " +
              (c.score === null ? "not graded" : pct(c.score)) +
              (c.error ? " · " + c.error : "")),
            el("table", {}, (c.criteria || []).map((k) => el("tr", {},
              el("td", {class: "text"}, k.criterion || ""),
              el("td", {class: "text"}, k.met === null ? "not graded" :
                (k.met ? "met" : "not met")),
              el("td", {class: "text"}, k.reason || "")))),
            el("pre", {}, JSON.stringify(c, null, 1)))));
      }
    }
  }

  header();
  scoreTable();
  figures();
  performance.mark("restbench-figures");
  matrix();
  requirementList();
  agentEval();
  grade();
  window.restbenchReport = {openRequirement: openRequirement, data: DATA};
  performance.mark("restbench-ready");
  document.body.setAttribute("data-ready", "true");
})();
