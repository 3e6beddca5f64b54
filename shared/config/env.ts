import { sqsSettings } from '../events/settings.ts';

/**
 * Only the local bus (local/bus.ts) still reads its region through here; every
 * other module reads its own settings (shared/config/settings.ts). Remove once
 * local/bus.ts imports `sqsSettings` from shared/events/settings.ts itself.
 */
export const env = sqsSettings;
