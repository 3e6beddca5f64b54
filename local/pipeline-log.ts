/** A warning of the local pipeline on this process's output (none under LOG_LEVEL=silent, as the tests run). */
export function warn(message: string, data?: Record<string, unknown>): void {
  if (process.env.LOG_LEVEL !== 'silent') console.log(JSON.stringify({ level: 'WARN', message, ...data }));
}
