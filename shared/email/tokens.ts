import { randomBytes } from 'node:crypto';

/** A ticket's reply token: 16 lower-case base32 characters (80 random bits), unguessable, fit for an address's local part. */
export const newReplyToken = (): string => [...randomBytes(16)].map((b) => 'abcdefghijklmnopqrstuvwxyz234567'[b % 32]).join('');
