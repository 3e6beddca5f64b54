import { NestedStack, type Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { StackPart } from '#app/topology.ts';

/** What each part's nested stack holds, in its description. */
const PARTS: Record<StackPart, { id: string; description: string }> = {
  views: { id: 'Views', description: 'Ticket views and macros: their API function, the view-count and recount queues with their consumers, the time pass' },
};

/**
 * The features deployed as nested stacks (app/topology.ts StackPart): where a
 * row of the route table or the topology is built. A part's nested stack is
 * made when its first row asks for it, in the service's stack, so everything
 * else keeps its logical id. References between a part and the service's
 * stack (the table, the bus, a queue of the other side, the API's id) become
 * the nested stack's parameters and outputs; CDK wires them.
 *
 * Moving a deployed row into a part replaces its resources (a queue is made
 * anew and the old one deleted with what it held; a named alarm would clash
 * with itself): a part is for rows that were never deployed elsewhere, as
 * this round's views (docs/decisions.md "Views in a nested stack").
 */
export class Parts {
  private readonly byPart = new Map<StackPart, NestedStack>();

  constructor(private readonly scope: Stack) {}

  /** The parts' nested stacks made so far. */
  get stacks(): NestedStack[] {
    return [...this.byPart.values()];
  }

  /** The scope a row of `part` is built in: its part's nested stack, or the service's stack for a row of none. */
  of(part: StackPart | undefined): Construct {
    if (!part) return this.scope;
    let stack = this.byPart.get(part);
    if (!stack) {
      const { id, description } = PARTS[part];
      stack = new NestedStack(this.scope, id, { description: `${description} (${this.scope.stackName})` });
      this.byPart.set(part, stack);
    }
    return stack;
  }
}
