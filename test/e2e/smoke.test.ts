import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();

describe('local gateway', () => {
  it('answers /users/me for a fresh account owner with rate-limit headers', async () => {
    const acct = await createTestAccount('free');
    const res = await client.request('GET', '/playbook/api/v1/users/me', { token: acct.ownerKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: acct.ownerId, role: 'owner' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });
});
