/**
 * Structured JSON logs (one line per entry) for CloudWatch; quiet under tests.
 */
const silent = process.env.LOG_LEVEL === 'silent';

function write(level: string, message: string, data?: Record<string, unknown>) {
  if (silent) return;
  const fields = Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v]));
  console.log(JSON.stringify({ level, message, timestamp: new Date().toISOString(), ...fields }));
}

export const logger = {
  info: (message: string, data?: Record<string, unknown>) => write('INFO', message, data),
  warn: (message: string, data?: Record<string, unknown>) => write('WARN', message, data),
  error: (message: string, data?: Record<string, unknown>) => write('ERROR', message, data),
};
