/** `npm run openapi`: write the OpenAPI 3.1 document generated from the zod contracts. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { openApiDocument } from '#app/openapi/document.ts';

const out = process.argv[2] ?? 'docs/openapi.json';
mkdirSync(out.replace(/\/[^/]*$/, '') || '.', { recursive: true });
writeFileSync(out, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`wrote ${out}`);
