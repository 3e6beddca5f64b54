/** The service name on every log line and metric (Powertools' `service`). */
export const SERVICE_NAME = 'support-desk';

/** The dimensions every business metric carries: alarms must name the same set to read it. */
export const metricDimensions = (stackName: string) => ({ service: SERVICE_NAME, Stack: stackName });
