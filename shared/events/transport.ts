/**
 * Characters a transport refuses in a raw message body. SQS accepts
 * `#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF`; the local SQS
 * emulator (fauxqs) also refuses everything above U+FFFF. Inside a JSON
 * document such a character can only sit in a string, where `\uXXXX` escapes
 * decode to exactly the same value, so escaping them is lossless.
 */
const REFUSED = /[\uFFFE\uFFFF]|[\u{10000}-\u{10FFFF}]|[\uD800-\uDFFF]/gu;

const escapeChar = (ch: string) => {
  let out = '';
  for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
};

/** A JSON text with every character some transport refuses written as `\uXXXX` escapes (same value once parsed). */
export const escapeForTransport = (json: string): string => json.replace(REFUSED, escapeChar);

/** Characters SQS (and fauxqs) accept in a body, as the emulator checks them. */
const SQS_REFUSED = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/u;

/** SQS caps a message (body plus attributes) at 256 KB; the local stack holds to it even where the emulator would not. */
export const MAX_SQS_MESSAGE_BYTES = 256 * 1024;

/** Why SQS would refuse this body, or null. */
export function sqsBodyProblem(body: string): string | null {
  const size = Buffer.byteLength(body, 'utf8');
  if (size > MAX_SQS_MESSAGE_BYTES) return `message of ${size} bytes exceeds the SQS limit of ${MAX_SQS_MESSAGE_BYTES}`;
  const bad = SQS_REFUSED.exec(body);
  if (bad) return `message contains a character SQS refuses (U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`;
  return null;
}
