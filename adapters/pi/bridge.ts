// lifeloop's hook bridge for Pi: the glue that follows the kit's bridge
// runtime (adapters/kit/bridge.js, which gives `lifeloop`) in the one
// extension file `lifeloop run` writes and loads with --extension; the
// line above the glue gives SESSION_POINTER. Each lifecycle event hands
// the wrapper a JSON object (session_id, transcript_path, cwd, turn_id,
// prompt, source, reason; never a prompt to anyone but lifeloop) through
// lifeloop.call and waits for its answer; the runtime keeps the calls in
// the order of the events (Pi does not wait for every handler before it
// goes on: agent_end and session_shutdown of a -p run overlap). Context
// lifeloop answers at a prompt (or at session start, kept for the first
// prompt) is added to that prompt as a custom message, which Pi sends to
// the model after the user's message and keeps in the session. At each
// session start it also writes the session file's path into the lifeloop
// session folder (SESSION_POINTER), so lifeloop follows exactly this
// launch's file. Every failure is silent: the bridge never stops Pi.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// call resolves to the context the wrapper answers for the hook ("" for
// none).
const call = (hook: string, input: Record<string, unknown>): Promise<string> => lifeloop.call(hook, input);

// pointSession records the path of the session file Pi writes (it
// exists only once the first reply has ended) for lifeloop's discovery.
function pointSession(file: string | undefined) {
	const dir = process.env.LIFELOOP_SESSION_DIR;
	if (!dir || !file) return;
	try {
		const tmp = join(dir, SESSION_POINTER + ".tmp");
		writeFileSync(tmp, file, { mode: 0o600 });
		renameSync(tmp, join(dir, SESSION_POINTER));
	} catch {}
}

// The factory never throws: Pi exits at launch when an extension's
// factory fails, and the bridge must never stop Pi.
export default function (pi: any) {
	try {
		register(pi);
	} catch {}
}

function register(pi: any) {
	let frame = "";
	let pending: string[] = [];
	const base = (ctx: any) => ({
		session_id: ctx.sessionManager.getSessionId(),
		transcript_path: ctx.sessionManager.getSessionFile() ?? "",
		cwd: ctx.cwd,
	});
	pi.on("session_start", async (event: any, ctx: any) => {
		pointSession(ctx.sessionManager.getSessionFile());
		const text = await call("session_start", { ...base(ctx), source: event.reason });
		if (text) pending.push(text);
	});
	pi.on("before_agent_start", async (event: any, ctx: any) => {
		// The frame id is the one lifeloop reads from the session file:
		// the session id and the number of this prompt's user message.
		const users = ctx.sessionManager
			.getEntries()
			.filter((e: any) => e.type === "message" && e.message?.role === "user").length;
		frame = `${ctx.sessionManager.getSessionId()}#${users + 1}`;
		const text = await call("before_agent_start", { ...base(ctx), turn_id: frame, prompt: event.prompt });
		const context = [...pending, text].filter(Boolean);
		pending = [];
		if (context.length === 0) return;
		return { message: { customType: "lifeloop", content: context.join("\n\n"), display: false } };
	});
	pi.on("agent_start", async (_event: any, ctx: any) => {
		if (frame) await call("agent_start", { ...base(ctx), turn_id: frame });
	});
	pi.on("agent_end", async (_event: any, ctx: any) => {
		if (frame) await call("agent_end", { ...base(ctx), turn_id: frame });
		frame = "";
	});
	pi.on("session_shutdown", async (event: any, ctx: any) => {
		await call("session_shutdown", { ...base(ctx), reason: event.reason });
	});
}
