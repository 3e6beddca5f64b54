import { queueScheduledCounts } from '#shared/views/background.ts';
import { passSettings } from './settings.ts';

const queueUrl = passSettings().VIEW_RECOUNT_QUEUE_URL;

/** On a timer: every account with time-based view conditions, or a count owed, is counted again in the background. */
export const handler = async () => queueScheduledCounts(queueUrl);
