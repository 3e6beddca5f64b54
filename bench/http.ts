/**
 * A JSON call through a local gateway with a bearer token. The bench measures
 * successful calls, so an error answer throws with its body.
 */
export const gatewayCaller =
  (baseUrl: string) =>
  async (token: string, method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path} -> ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
