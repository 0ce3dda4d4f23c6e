// restbench's reporter for Node's built-in test runner: one JSON line per finished test, with
// what the harness needs to tell an assertion failure from an error.
export default async function* restbenchReporter(source) {
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const data = event.data;
    const error = data.details?.error;
    const cause = error?.cause ?? error;
    yield JSON.stringify({
      name: data.name,
      nesting: data.nesting,
      suite: data.details?.type === "suite",
      // With --test, Node also reports each file as a test of its own (named by its path).
      fileLevel: data.file !== undefined && data.name === data.file,
      passed: event.type === "test:pass",
      skipped: Boolean(data.skip || data.todo),
      failureType: error?.failureType ?? null,
      errorName: cause?.name ?? null,
      errorCode: cause?.code ?? null,
      message: String(cause?.message ?? error?.message ?? "").slice(0, 500),
    }) + "\n";
  }
}
