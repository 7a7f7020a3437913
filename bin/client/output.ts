/**
 * How entries look in a terminal: a table (cli-table3) with the level in
 * its colour (colorette) when standard output is a terminal, plain lines
 * otherwise. Colours follow colorette's rules: on for a terminal, off with
 * NO_COLOR, forced with FORCE_COLOR.
 */
import Table from 'cli-table3';
import { createColors } from 'colorette';

export type LogEntry = Record<string, unknown> & { id: number; level: string; event: string; timestamp: string; project_id: number };

const CORRELATION = ['category', 'logger', 'session_id', 'request_id', 'connection_generation', 'tool_call_id', 'message_id', 'operation_id'] as const;

/** Colour for a terminal unless NO_COLOR is set; FORCE_COLOR forces it (colorette's own rule). */
function useColor(stream: NodeJS.WriteStream): boolean {
  if ('FORCE_COLOR' in process.env && process.env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true && !('NO_COLOR' in process.env);
}

export function colorsFor(stream: NodeJS.WriteStream) {
  return createColors({ useColor: useColor(stream) });
}

function levelPainter(colors: ReturnType<typeof createColors>): (level: string) => string {
  const paint: Record<string, (s: string) => string> = {
    debug: colors.gray,
    info: colors.green,
    warning: colors.yellow,
    error: colors.red,
    critical: (s) => colors.bold(colors.red(s)),
  };
  return (level) => (paint[level] ?? ((s: string) => s))(level.toUpperCase());
}

/** The correlation fields an entry has, as `name=value` words. */
function correlation(entry: LogEntry): string {
  return CORRELATION.filter((f) => entry[f] !== null && entry[f] !== undefined)
    .map((f) => `${f}=${String(entry[f])}`)
    .join(' ');
}

/** A page of entries as a table. */
export function entriesTable(entries: readonly LogEntry[], stream: NodeJS.WriteStream): string {
  const colors = colorsFor(stream);
  const colored = useColor(stream);
  const level = levelPainter(colors);
  const width = stream.columns && stream.columns > 60 ? stream.columns : 120;
  const table = new Table({
    head: ['id', 'timestamp', 'level', 'project', 'event', 'correlation'],
    style: { head: colored ? ['cyan'] : [], border: colored ? ['gray'] : [] },
    colWidths: [null, null, null, null, Math.max(20, Math.floor(width * 0.4)), null],
    wordWrap: true,
  });
  for (const e of entries) table.push([String(e.id), e.timestamp, level(e.level), String(e.project_id), e.event, correlation(e)]);
  return table.toString();
}

/** One entry as one line (`tail`): time, level, project, event and correlation fields. */
export function entryLine(entry: LogEntry, stream: NodeJS.WriteStream): string {
  const colors = colorsFor(stream);
  const extra = correlation(entry);
  return `${colors.dim(entry.timestamp)} ${levelPainter(colors)(entry.level).padEnd(8)} ${colors.dim(`#${entry.id} p${entry.project_id}`)} ${entry.event}${extra ? ` ${colors.dim(extra)}` : ''}`;
}
