import { readFileSync } from 'node:fs';
import { readSecret } from '../config/secrets.ts';
import { logger } from '../logger.ts';
import type { CompanyFacts } from './model.ts';
import { enrichmentSettings } from './settings.ts';

/** The enrichment port: company facts for a domain, or null when the provider knows nothing. */
export interface EnrichmentProvider {
  lookup(domain: string): Promise<CompanyFacts | null>;
}

/** HTTP provider: GET {url}?domain=..., bearer key, bounded by a timeout. Errors leave the record unchanged. */
export function httpProvider(url: string, apiKey: string | undefined | (() => Promise<string>), timeoutMs = 3000): EnrichmentProvider {
  return {
    async lookup(domain) {
      const u = new URL(url);
      u.searchParams.set('domain', domain);
      const key = typeof apiKey === 'function' ? await apiKey() : apiKey;
      const res = await fetch(u, { headers: key ? { Authorization: `Bearer ${key}` } : {}, signal: AbortSignal.timeout(timeoutMs) });
      if (res.status === 404) return null;
      if (!res.ok) throw new Error(`Enrichment provider answered ${res.status}`);
      return pickFacts(await res.json());
    },
  };
}

/** File provider: a JSON object keyed by domain (the local stack ships a small file of public company facts). */
export function fileProvider(path: string): EnrichmentProvider {
  let data: Record<string, unknown> | undefined;
  return {
    async lookup(domain) {
      data ??= JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      const entry = data[domain] ?? data[domain.replace(/^www\./, '')];
      return entry ? pickFacts(entry) : null;
    },
  };
}

const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 2048) : typeof v === 'number' ? String(v) : null);

/** Keep only the fields we store, as strings (api-spec: all string or null). */
function pickFacts(raw: unknown): CompanyFacts | null {
  if (!raw || typeof raw !== 'object') return null;
  const r = raw as Record<string, unknown>;
  return { name: str(r.name), country: str(r.country), industry: str(r.industry), employeeCount: str(r.employeeCount), yearlyRevenue: str(r.yearlyRevenue), logoUrl: str(r.logoUrl) };
}

/** The provider chosen by configuration (ENRICHMENT_PROVIDER=http|file|none); none means fields stay null. */
export function configuredProvider(): EnrichmentProvider | null {
  const s = enrichmentSettings();
  switch (s.ENRICHMENT_PROVIDER) {
    case 'http': {
      // Deployed, the key stays in Secrets Manager (read through the extension); locally it may be given directly.
      const secretId = s.ENRICHMENT_API_KEY_SECRET_ID;
      const apiKey = secretId ? () => readSecret(secretId) : s.ENRICHMENT_API_KEY;
      // The settings' own rules guarantee the URL (and the file below) of the chosen provider.
      return httpProvider(s.ENRICHMENT_URL!, apiKey, s.ENRICHMENT_TIMEOUT_MS);
    }
    case 'file':
      return fileProvider(s.ENRICHMENT_FILE!);
    default:
      return null;
  }
}

/** Look up facts, turning provider failures into "no data" (logged): enrichment never fails a request. */
export async function safeLookup(provider: EnrichmentProvider | null, domain: string): Promise<CompanyFacts | null> {
  if (!provider) return null;
  try {
    return await provider.lookup(domain);
  } catch (err) {
    logger.warn('enrichment lookup failed', { domain, err });
    return null;
  }
}
