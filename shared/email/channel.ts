import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite } from '../db/transact.ts';
import { ValidationError } from '../domain/errors.ts';
import { inboundAddress, inboundDomain } from './addresses.ts';
import type { EmailSettings, UpdateEmailSettingsInput } from './model.ts';
import { emailSettingsWrite, getEmailSettings, type EmailSettingsRecord } from './repository.ts';

const toDto = (accountId: string, r: EmailSettingsRecord | null): EmailSettings => ({
  inboundAddress: inboundAddress(accountId),
  supportAddresses: r?.supportAddresses ?? [],
  fromName: r?.fromName ?? null,
});

export const getChannelSettings = async (p: Principal): Promise<EmailSettings> => toDto(p.accountId, await getEmailSettings(p.accountId));

/** Change the settings (audited as settings of the account, `email.<field>`), at the version read. */
export async function updateChannelSettings(p: Principal, input: UpdateEmailSettingsInput): Promise<EmailSettings> {
  const domain = inboundDomain();
  const looping = (input.supportAddresses ?? []).findIndex((a) => a.toLowerCase().endsWith(`@${domain}`));
  if (looping >= 0)
    throw new ValidationError('Invalid settings', [{ field: `supportAddresses.${looping}`, message: `must not be on the inbound domain ${domain}: its mail would come back to the service` }]);
  return retryOnConflict(async () => {
    const current = await getEmailSettings(p.accountId);
    const at = new Date().toISOString();
    const next: EmailSettingsRecord = {
      accountId: p.accountId,
      supportAddresses: input.supportAddresses ?? current?.supportAddresses ?? [],
      fromName: input.fromName === undefined ? (current?.fromName ?? null) : input.fromName,
      version: (current?.version ?? 0) + 1,
      updatedAt: at,
    };
    const changes = diffFields(current ?? { supportAddresses: [], fromName: null }, next, ['supportAddresses', 'fromName']).map((c) => ({ ...c, field: `email.${c.field}` }));
    if (changes.length) {
      await transactWrite([emailSettingsWrite(next, current), auditWrite({ accountId: p.accountId, resource: { type: 'account', id: p.accountId }, actor: userActor(p), via: 'api', changes, at })]);
    }
    return toDto(p.accountId, changes.length ? next : current);
  });
}
