import { getAccount } from '../accounts/api.ts';
import { inboundSettings } from './settings.ts';

/**
 * The addresses of the email channel (decisions §17). Account ids are
 * `acct_` and 26 Crockford base32 characters in upper case; mail addresses are
 * read case-insensitively, so an address carries the id in lower case and the
 * id is recovered by upper-casing its body (Crockford has no ambiguous letters).
 */
const ACCOUNT_LOCAL_PART = /^(acct_[0-9a-hjkmnp-tv-z]{26})(?:\+([a-z0-9]{1,64}))?$/;

export const inboundDomain = (): string => inboundSettings().INBOUND_DOMAIN;

/** The account's inbound address: mail to it becomes tickets and replies. */
export const inboundAddress = (accountId: string, domain = inboundDomain()): string => `${accountId.toLowerCase()}@${domain}`;

/** A ticket's reply address: the fallback that threads a reply whose client dropped In-Reply-To and References. */
export const replyAddress = (accountId: string, replyToken: string, domain = inboundDomain()): string => `${accountId.toLowerCase()}+${replyToken}@${domain}`;

export interface InboundRecipient {
  accountId: string;
  /** The reply token of `<account>+<token>@domain`, or null for the plain inbound address. */
  replyToken: string | null;
}

/**
 * Which account (and ticket reply token) an envelope recipient names, by the
 * form of the address alone; null for any other domain or local part.
 */
export function parseInboundAddress(address: string, domain = inboundDomain()): InboundRecipient | null {
  const at = address.lastIndexOf('@');
  if (at < 1) return null;
  const local = address.slice(0, at).trim().toLowerCase();
  if (
    address
      .slice(at + 1)
      .trim()
      .toLowerCase() !== domain
  )
    return null;
  const m = ACCOUNT_LOCAL_PART.exec(local);
  if (!m) return null;
  return { accountId: `acct_${m[1].slice(5).toUpperCase()}`, replyToken: m[2] ?? null };
}

/**
 * The account an envelope recipient names, if that account exists: what the
 * local SMTP server asks at RCPT TO (550 otherwise) and what the inbound
 * function asks before it makes anything (dropped and counted otherwise).
 */
export async function findInboundRecipient(address: string, domain = inboundDomain()): Promise<InboundRecipient | null> {
  const parsed = parseInboundAddress(address, domain);
  if (!parsed) return null;
  return (await getAccount(parsed.accountId)) ? parsed : null;
}
