import { LatticeError } from "@lattice/tools";

/**
 * An agent tool or a team refused to go deeper: running or handing off to the next agent
 * would make the chain of agents longer than `maxDepth` (a cycle such as A → B → A → …, or
 * delegation nested too deep). Code: `"agent_depth_exceeded"`. Inside a run it becomes the
 * call's `is_error` tool_result, so the model can answer without the delegation.
 */
export class AgentDepthError extends LatticeError {
  /** The agents from the first one to the one that was refused. */
  readonly chain: readonly string[];
  /** The limit that was exceeded. */
  readonly maxDepth: number;

  /**
   * @param prefix - Who refused, for example `agentTool("writer"):`.
   * @param chain - The agents from the first one to the refused one.
   * @param maxDepth - The limit.
   */
  constructor(prefix: string, chain: readonly string[], maxDepth: number) {
    super(
      "agent_depth_exceeded",
      `${prefix} refused to run "${chain[chain.length - 1]}": the agent chain ${chain.join(" → ")} would be ${chain.length - 1} deep, over maxDepth ${maxDepth}. An agent that calls or hands off back to its callers loops; answer without delegating, or raise maxDepth (createTeam({ maxDepth }) or agentTool(definition, { maxDepth })).`,
    );
    this.chain = chain;
    this.maxDepth = maxDepth;
    this.name = "AgentDepthError";
  }
}

/**
 * A handoff had nowhere to go: the agent tool has no mailbox and the run is not part of a
 * team, or the team has no member of that name. Code: `"mailbox_unavailable"` or
 * `"unknown_member"`. Inside a run it becomes the call's `is_error` tool_result.
 */
export class HandoffError extends LatticeError {
  /**
   * @param code - `"mailbox_unavailable"` or `"unknown_member"`.
   * @param message - What happened and how to configure it.
   */
  constructor(code: "mailbox_unavailable" | "unknown_member", message: string) {
    super(code, message);
    this.name = "HandoffError";
  }
}
