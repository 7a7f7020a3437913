// A node:test reporter that prints nothing until the end, then every failed
// test with its file, name path and error message: in a long TAP log the
// failure is otherwise hard to find.
export default async function* failureSummary(source) {
  const failed = [];
  const names = [];
  for await (const event of source) {
    if (event.type === 'test:start') names[event.data.nesting] = event.data.name;
    if (event.type === 'test:fail' && event.data.details?.type !== 'suite') {
      const path = [...names.slice(0, event.data.nesting), event.data.name].join(' > ');
      const error = event.data.details?.error;
      const cause = error?.cause ?? error;
      failed.push(
        `${event.data.file ?? '?'}\n  ${path}\n  ${String(cause?.message ?? cause)
          .split('\n')
          .slice(0, 12)
          .join('\n  ')}`,
      );
    }
  }
  if (failed.length) yield `\n# ${failed.length} failed test(s):\n${failed.map((f) => `# ${f.replace(/\n/g, '\n# ')}`).join('\n')}\n`;
}
