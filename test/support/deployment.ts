import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';

/** The deployment every integration file runs: the local stage's template (a JSON file) and the folder of its bundles. */
export interface RunDeployment {
  stackName: string;
  templateFile: string;
  bundleDir: string;
}

/** What the global setup writes once its preparation has ended: the deployment, or why it could not be made. */
export type DeploymentOutcome = { deployment: RunDeployment } | { error: string };

let ready: RunDeployment | undefined;

/**
 * Waits until the global setup has the run's deployment and DynamoDB Local ready (test/support/global-setup.ts
 * prepares them while the unit and infra files, which need neither, run), then keeps it for this worker. Called by
 * setup-env.ts before each integration file; a preparation that failed fails the file with its error.
 */
export async function awaitDeployment(): Promise<RunDeployment> {
  const file = inject('deploymentFile');
  while (!ready) {
    if (existsSync(file)) {
      const outcome = JSON.parse(readFileSync(file, 'utf8')) as DeploymentOutcome;
      if ('error' in outcome) throw new Error(`The test run's deployment could not be prepared: ${outcome.error}`);
      ready = outcome.deployment;
    } else await sleep(100);
  }
  return ready;
}

/** The run's deployment, once awaitDeployment has returned (every integration file's setup awaits it first). */
export function runDeployment(): RunDeployment {
  if (!ready) throw new Error('runDeployment() before awaitDeployment(): only integration files (setup-env.ts) have the deployment');
  return ready;
}
