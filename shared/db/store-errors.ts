import { ValidationError } from '../domain/errors.ts';

/**
 * The store's size limits that a request's input can reach (a key part over
 * 1,024/2,048 bytes, an item over 400 KB) as the caller's 422. Contracts bound
 * every input that becomes a key, so this is the last line; any other
 * ValidationException is our bug and stays a 500.
 */
export function storeLimitError(err: unknown): ValidationError | null {
  if ((err as Error)?.name !== 'ValidationException') return null;
  const message = (err as Error).message ?? '';
  if (/item size/i.test(message)) return new ValidationError('The record would exceed the 400 KB storage limit', [{ field: 'body', message: 'record too large' }], { cause: err });
  if (/primary key values must be under|key size|size of (hash|range)?key|range keys has exceeded|size limit of \d+ bytes/i.test(message)) {
    return new ValidationError('A value is too long to be stored or looked up', [{ field: 'body', message: 'a value used as an identifier is too long' }], { cause: err });
  }
  return null;
}
