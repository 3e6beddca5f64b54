import { describe, expect, it } from 'vitest';
import { htmlToText, sanitizeContent } from '#shared/messages/sanitize.ts';

/** Well-known XSS vectors (OWASP filter-evasion cheat sheet and friends). */
const PAYLOADS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=http://xss.example/xss.js></SCRIPT>',
  '<IMG SRC="javascript:alert(\'XSS\');">',
  '<IMG SRC=javascript:alert(&quot;XSS&quot;)>',
  "<IMG SRC=JaVaScRiPt:alert('XSS')>",
  '<img src=x onerror=alert(1)>',
  '<IMG """><SCRIPT>alert("XSS")</SCRIPT>">',
  '<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>',
  '<IMG SRC="jav&#x09;ascript:alert(\'XSS\');">',
  '<a href="javascript:alert(1)">click</a>',
  '<a href=" javascript:alert(1)">click</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<svg/onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  "<BODY ONLOAD=alert('XSS')>",
  '<iframe src="javascript:alert(1)"></iframe>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<div style="background-image: url(javascript:alert(1))">x</div>',
  "<STYLE>@import'http://xss.example/xss.css';</STYLE>",
  '<LINK REL="stylesheet" HREF="javascript:alert(\'XSS\');">',
  '<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert(\'XSS\');">',
  '<TABLE BACKGROUND="javascript:alert(\'XSS\')">',
  '<form action="javascript:alert(1)"><input type=submit></form>',
  '<details open ontoggle=alert(1)>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>',
  '<p onmouseover="alert(1)">hover</p>',
  '"><script>alert(document.cookie)</script>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '<base href="javascript:alert(1)//">',
  '<video><source onerror="alert(1)"></video>',
];

describe('message HTML sanitizer', () => {
  it.each(PAYLOADS)('neutralizes %s', (payload) => {
    const clean = sanitizeContent(payload).toLowerCase();
    expect(clean).not.toMatch(/<script|<iframe|<object|<embed|<svg|<style|<link|<meta|<base|<form|<math/);
    expect(clean).not.toMatch(/\son[a-z]+\s*=/);
    expect(clean).not.toMatch(/(href|src|action|background)\s*=\s*"?\s*(javascript|data|vbscript):/);
    expect(clean).not.toMatch(/style\s*=/);
  });

  it('keeps ordinary formatting and safe links', () => {
    const clean = sanitizeContent('<p>Hello <b>Ann</b>, see <a href="https://example.com/kb/1">the article</a>.</p><ul><li>one</li></ul>');
    expect(clean).toContain('<b>Ann</b>');
    expect(clean).toContain('href="https://example.com/kb/1"');
    expect(clean).toContain('rel="noopener noreferrer nofollow"');
    expect(clean).toContain('<li>one</li>');
  });

  it('derives plain text with line breaks and decoded entities', () => {
    expect(htmlToText('<p>Tom &amp; Jerry</p><p>2 &lt; 3<br>ok&nbsp;then &#8364;</p>')).toBe('Tom & Jerry\n2 < 3\nok then €');
  });
});

describe('htmlToText on adversarial input (linear time)', () => {
  const timed = (input: string) => {
    const start = process.cpuUsage();
    const text = htmlToText(input);
    const used = process.cpuUsage(start);
    return { text, ms: (used.user + used.system) / 1000 };
  };

  it('1 MiB of spaces, of spaces and tabs before a letter, and of "&" runs are handled in bounded CPU time', () => {
    for (const input of [' '.repeat(1 << 20), `${' \t'.repeat(1 << 19)}x`, `${' '.repeat(1 << 20)}\nx`, '&a'.repeat(1 << 19), '<br'.repeat(349_525)]) {
      const { ms } = timed(input);
      // The quadratic form took seconds for 100,000 spaces; linear work on 1 MiB is a few tens of ms.
      expect(ms, `${JSON.stringify(input.slice(0, 8))}…`).toBeLessThan(1_500);
    }
  });

  it('still trims line ends, keeps at most one blank line, and turns numeric entities that are not code points into U+FFFD (as HTML does) without throwing', () => {
    expect(htmlToText('<p>a  \t</p>\n\n\n\n<p>b</p>')).toBe('a\n\nb');
    expect(htmlToText('x&#99999999;y &#xD800; &#65; &amp;#99999999;')).toBe('x\ufffdy \ufffd A &#99999999;');
  });
});
