/** The process's logger (Powertools, structured JSON; `LOG_LEVEL=silent` under tests). */
export { logger } from './observability.ts';
