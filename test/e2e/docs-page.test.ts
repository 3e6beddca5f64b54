import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '#app/registry.ts';
import { localLambda } from '../support/lambda.ts';

/** Debian's chromium (apt-get install -y chromium); .ci/run installs it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let url = '';
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const { startGateway } = await import('../../local/gateway.ts');
  const { localPages } = await import('../../local/stack.ts');
  const gw = await startGateway(0, await localLambda(), { pages: await localPages() });
  url = gw.url;
  close = gw.close;
});
afterAll(async () => close?.());

describe('the API reference at /docs', () => {
  it('serves the renderer from the installed package, with no other origin', async () => {
    const page = await (await fetch(`${url}/docs`)).text();
    expect(page).not.toMatch(/https?:\/\//);
    for (const asset of ['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js']) {
      const res = await fetch(url + asset);
      expect(res.status, asset).toBe(200);
      expect((await res.text()).length, asset).toBeGreaterThan(10_000);
    }
  });

  it.skipIf(!existsSync(CHROMIUM))('renders every operation of the route table, grouped by resource, in headless Chromium', { timeout: 60_000 }, async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage();
      const offOrigin: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(url) && !r.url().startsWith('data:')) offOrigin.push(r.url());
      });
      await page.goto(`${url}/docs`);
      await page.waitForSelector('.opblock', { timeout: 30_000 });

      // Swagger UI gives each operation the id operations-<tag>-<operationId>; the tag is the endpoint group.
      // Besides the routes, the event payloads (OpenAPI `webhooks`) are rendered as operations event_<name>.
      const ids = await page.$$eval('.opblock', (els) => els.map((e) => e.id));
      // The routes, and the unauthenticated health check the gateway serves beside them.
      const expected = [...allRoutes().map((r) => `operations-${r.group}-${r.operationId}`), 'operations-health-health'];
      expect(ids.filter((id) => !/-event_/.test(id)).sort()).toEqual(expected.sort());
      expect(ids.filter((id) => /-event_ticket_/.test(id))).toHaveLength(7);
      const tags = await page.$$eval('.opblock-tag', (els) => els.map((e) => e.getAttribute('data-tag')));
      expect(new Set(tags)).toEqual(new Set([...allRoutes().map((r) => r.group), 'health']));

      // A create shows its request schema, and the page offers to authorize with a key.
      await page.click('#operations-tickets-createTicket .opblock-summary');
      await page.waitForSelector('#operations-tickets-createTicket .opblock-section-request-body');
      expect(await page.locator('.btn.authorize').count()).toBe(1);
      expect(offOrigin).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
