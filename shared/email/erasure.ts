/**
 * What an erasure (decisions §23) uses of the email channel: a ticket's
 * thread forgotten (its Message-IDs and reply token; the raw mail keys the
 * received ones name, for the bucket), and an address's undeliverable mark.
 */
export { forgetThread, forgetUndeliverable } from './repository.ts';
