/**
 * `npm run docs:events`: refresh what docs/events.md shows from the code, the
 * table of published event schemas (app/event-catalog.ts) and the
 * subscriber example (docs/examples/ticket-resolved-subscriber.ts); a unit
 * test fails while either is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withEventsDocSection } from '#app/event-catalog.ts';

export const EVENTS_DOC = 'docs/events.md';
export const SUBSCRIBER_EXAMPLE = 'docs/examples/ticket-resolved-subscriber.ts';
const EXAMPLE_START = `<!-- ${SUBSCRIBER_EXAMPLE}, verbatim (npm run docs:events) -->`;

/** The doc with the example's code block (after its marker) replaced by the file. */
export function withSubscriberExample(markdown: string, example: string): string {
  const start = markdown.indexOf(EXAMPLE_START);
  if (start < 0) throw new Error(`${EVENTS_DOC} has no ${EXAMPLE_START}`);
  const open = markdown.indexOf('```ts\n', start);
  const close = markdown.indexOf('\n```\n', open);
  return `${markdown.slice(0, open)}\`\`\`ts\n${example.trimEnd()}${markdown.slice(close)}`;
}

/** docs/events.md as the code says it should read. */
export const currentEventsDoc = (markdown: string, example: string) => withSubscriberExample(withEventsDocSection(markdown), example);

if (import.meta.main) {
  const before = readFileSync(EVENTS_DOC, 'utf8');
  const after = currentEventsDoc(before, readFileSync(SUBSCRIBER_EXAMPLE, 'utf8'));
  writeFileSync(EVENTS_DOC, after);
  console.log(after === before ? `${EVENTS_DOC} is up to date` : `updated ${EVENTS_DOC}`);
}
