import { sweeperSettings } from '#functions/outbox-publisher/settings.ts';

/**
 * Only the local pipeline (local/pipeline.ts) still reads the sweep age through
 * here; every other module reads its own settings (shared/config/settings.ts).
 * Remove once local/pipeline.ts imports `sweeperSettings` itself.
 */
export const pipelineEnv = sweeperSettings;
