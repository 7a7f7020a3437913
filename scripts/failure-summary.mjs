// A node:test reporter that prints nothing until the end, then the slowest
// files and suites (to keep the suite quick) and every failed test with its file, name
// path and error message: in a long TAP log the failure is otherwise hard to find.
export default async function* failureSummary(source) {
  const failed = [];
  const names = [];
  const fileMs = new Map();
  for await (const event of source) {
    if (event.type === 'test:start') names[event.data.nesting] = event.data.name;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      // Suites declared through a shared helper (describeEachBackend) name the helper's file: those go by their name.
      const key = event.data.file.includes('/test/support/') ? `"${event.data.name}"` : event.data.file;
      fileMs.set(key, (fileMs.get(key) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
    if (event.type === 'test:fail' && event.data.details?.type !== 'suite') {
      const path = [...names.slice(0, event.data.nesting), event.data.name].join(' > ');
      const error = event.data.details?.error;
      const cause = error?.cause ?? error;
      failed.push(`${event.data.file ?? '?'}\n  ${path}\n  ${describe(cause).split('\n').slice(0, 12).join('\n  ')}`);
    }
  }
  if (fileMs.size > 3) {
    const cwd = `${process.cwd()}/`;
    const slowest = [...fileMs].sort((a, b) => b[1] - a[1]).slice(0, 15);
    yield `\n# slowest files and suites:\n${slowest.map(([f, ms]) => `#   ${(ms / 1000).toFixed(1).padStart(6)} s  ${f.replace(cwd, '')}`).join('\n')}\n`;
  }
  if (failed.length) yield `\n# ${failed.length} failed test(s):\n${failed.map((f) => `# ${f.replace(/\n/g, '\n# ')}`).join('\n')}\n`;
}

/** An error's message; any other value as text, even one without a prototype (String() throws on those). */
function describe(value) {
  if (typeof value?.message === 'string') return value.message;
  try {
    return String(value);
  } catch {
    return JSON.stringify(value) ?? Object.prototype.toString.call(value);
  }
}
