// lifeloop's hook bridge for OpenClaw: a plugin `lifeloop run` loads for
// one `openclaw agent --local` launch through a configuration file of its
// own that includes the user's. Its typed hooks report each turn of the
// session the user talks to (trigger "user"; OpenClaw's own runs, such as
// the memory flush before a compaction, are left out), with the frame ids
// lifeloop's database reader gives the same turns ("<session id>#<n>" for
// the n-th user turn of the session since the process started):
//
//	before_prompt_build  frame.opening; context lifeloop answers is
//	                     prepended to the user's prompt (prependContext)
//	model_call_started   frame.opened (the turn's first model call)
//	agent_end            frame.ending, frame.ended
//
// Each report is a JSON object (session_id, turn_id, cwd, trigger,
// reason; never a prompt or an answer) handed to the wrapper through
// lifeloop.call (the kit's bridge runtime, adapters/kit/bridge.js, which
// this glue follows in the one module lifeloop writes: the control
// socket, else `lifeloop host-hook --adapter openclaw --hook NAME`). The
// runtime keeps the calls in the order of the events: OpenClaw may run
// observation hooks (model_call_started, agent_end) without waiting for
// them. Every failure is silent: the bridge never stops OpenClaw.
const call = (hook, input) => lifeloop.call(hook, input);

// The turns of this process: user turns counted per session, and the
// open turn of each run ({frame, base, opened}; a model call's context
// has no workspace).
const counts = new Map();
const runs = new Map();

// BUDGET is each handler's time limit: OpenClaw's default for
// before_prompt_build (15 s) is shorter than a wrapper's answer may take.
const BUDGET = { timeoutMs: lifeloop.timeoutMs + 5000 };

function base(ctx) {
	return { session_id: ctx?.sessionId ?? "", cwd: ctx?.workspaceDir ?? "" };
}

export default {
	id: "lifeloop-bridge",
	name: "lifeloop bridge",
	description: "Reports each turn's lifecycle to the lifeloop wrapper that launched OpenClaw.",
	register(api) {
		api.on("before_prompt_build", async (_event, ctx) => {
			if (ctx?.trigger !== "user" || !ctx?.sessionId || !ctx?.runId) return undefined;
			const n = (counts.get(ctx.sessionId) ?? 0) + 1;
			counts.set(ctx.sessionId, n);
			const frame = `${ctx.sessionId}#${n}`;
			const t = { frame, base: base(ctx), opened: false };
			runs.set(ctx.runId, t);
			const text = await call("before_prompt_build", { ...t.base, turn_id: frame, trigger: ctx.trigger });
			return text ? { prependContext: text } : undefined;
		}, BUDGET);
		api.on("model_call_started", async (event, ctx) => {
			const t = runs.get(event?.runId ?? ctx?.runId);
			if (!t || t.opened) return;
			t.opened = true;
			await call("model_call_started", { ...t.base, turn_id: t.frame });
		}, BUDGET);
		api.on("agent_end", async (event, ctx) => {
			const id = event?.runId ?? ctx?.runId;
			const t = runs.get(id);
			if (!t) return;
			runs.delete(id);
			await call("agent_end", { ...t.base, turn_id: t.frame, reason: event?.success === false ? "error" : "stop" });
		}, BUDGET);
	},
};
