/* global module, process */
// `node:http` for the Lambda bundles (infra/bundling.ts aliases the specifier here). Imported as an
// ES module, Node builds its namespace by reading every export, and three of http's exports
// (WebSocket, CloseEvent, MessageEvent) are getters that load undici, Node's whole fetch stack:
// `await import('node:http')` takes ~40 ms on this machine against ~4 ms for this. Handed over as
// a CommonJS value, the module loads without touching them; every export is the same object.
module.exports = process.getBuiltinModule('node:http');
