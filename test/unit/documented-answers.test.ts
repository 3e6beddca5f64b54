import { describe, expect, it } from 'vitest';
import { recordAnswer, undocumentedAnswers } from '../support/documented.ts';

describe("the e2e client's check of answers against the OpenAPI document", () => {
  it('flags a status the operation does not list, by its route template, and nothing else', () => {
    recordAnswer('GET', '/playbook/api/v1/users?limit=5', 403);
    recordAnswer('POST', '/helpdesk/api/v1/tickets', 409);
    recordAnswer('GET', '/playbook/api/v1/users/me', 200);
    recordAnswer('POST', '/helpdesk/api/v1/tickets', 418);
    recordAnswer('DELETE', '/playbook/api/v1/users/usr_1', 418);
    // No such route (the catch-all's 404) and no such method: not the document's.
    recordAnswer('GET', '/helpdesk/api/v1/nothing/here', 404);
    recordAnswer('PATCH', '/helpdesk/api/v1/tickets', 404);
    expect(undocumentedAnswers()).toEqual(['DELETE /playbook/api/v1/users/{user_id} 418', 'POST /helpdesk/api/v1/tickets 418']);
  });
});
