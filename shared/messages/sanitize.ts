import sanitizeHtml from 'sanitize-html';

/**
 * Message HTML as agents and customers write it, minus anything active:
 * no scripts or styles, no event-handler attributes, only http(s)/mailto/tel
 * links (sanitize-html, an allow-list parser, not regexes).
 */
const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'span', 'del', 'ins', 'sub', 'sup', 'u'],
  allowedAttributes: {
    a: ['href', 'title', 'target', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    '*': ['dir', 'lang'],
    td: ['colspan', 'rowspan'],
    th: ['colspan', 'rowspan', 'scope'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https', 'cid'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow' }) },
};

export const sanitizeContent = (html: string): string => sanitizeHtml(html, OPTIONS);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** A code point from a numeric entity, or null when it is not one (out of range, or a surrogate). */
const codePoint = (n: number) => (Number.isInteger(n) && n >= 0 && n <= 0x10ffff && (n < 0xd800 || n > 0xdfff) ? String.fromCodePoint(n) : null);

/**
 * Trailing spaces and tabs of every line go, and runs of blank lines shrink to
 * one. A single pass: the regex form (`/[ \t]+\n/g`) restarts at every space
 * of a long run and is quadratic on adversarial input.
 */
function tidyLines(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let blank = 0;
  for (const raw of lines) {
    let end = raw.length;
    while (end > 0 && (raw.charCodeAt(end - 1) === 32 || raw.charCodeAt(end - 1) === 9)) end--;
    const line = end === raw.length ? raw : raw.slice(0, end);
    blank = line ? 0 : blank + 1;
    if (blank < 2) out.push(line);
  }
  return out.join('\n');
}

/** Plain text of message HTML: block ends become line breaks, tags go, entities are decoded. Linear in the input. */
export function htmlToText(html: string): string {
  const withBreaks = html.replace(/<br\s*\/?>/gi, '\n').replace(/<\/(p|div|li|h[1-6]|tr|blockquote|pre)>/gi, '\n');
  const text = sanitizeHtml(withBreaks, { allowedTags: [], allowedAttributes: {} });
  const decoded = text
    .replace(/&(#\d{1,8}|#x[0-9a-f]{1,8}|\w{1,32});/gi, (m, e: string) => {
      if (e.startsWith('#x') || e.startsWith('#X')) return codePoint(parseInt(e.slice(2), 16)) ?? m;
      if (e.startsWith('#') && e !== '#39') return codePoint(Number(e.slice(1))) ?? m;
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/\u00a0/g, ' ');
  return tidyLines(decoded).trim();
}
