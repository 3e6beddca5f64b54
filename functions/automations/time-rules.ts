import type { ScheduledEvent } from 'aws-lambda';
import { enqueueTimeRuleWork } from '#shared/automations/time-rules.ts';
import { timeRulesSettings } from './settings.ts';

const queueUrl = timeRulesSettings().AUTOMATION_TIME_RULES_QUEUE_URL;

/** Hourly: queue the open tickets of accounts with time rules, evaluated as of the schedule's time. */
export const handler = async (event?: Partial<ScheduledEvent>) => enqueueTimeRuleWork(queueUrl, event?.time ? new Date(event.time) : new Date());
