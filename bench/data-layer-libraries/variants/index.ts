import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Variant } from '../common.ts';

export const VARIANTS = ['today', 'electrodb', 'toolbox'] as const;
export type VariantName = (typeof VARIANTS)[number];

/** Each variant is imported only in the process that measures it, so no library's code is loaded (or JIT-compiled) in another's run. */
export async function loadVariant(name: VariantName, ddb: DynamoDBDocumentClient, table: string): Promise<Variant> {
  if (name === 'today') return (await import('./today.ts')).createToday(ddb, table).variant;
  if (name === 'electrodb') return (await import('./electrodb.ts')).createElectro(ddb, table).variant;
  return (await import('./toolbox.ts')).createToolbox(ddb, table).variant;
}
