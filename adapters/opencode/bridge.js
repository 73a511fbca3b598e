// lifeloop's hook bridge for OpenCode: a plugin `lifeloop run` names in
// OPENCODE_CONFIG_CONTENT for one launch. It follows OpenCode's bus
// events and reports the top-level sessions the process creates and their turns,
// with the frame ids lifeloop's database reader gives the same turns (the
// id of the user message that opens the turn):
//
//	session a session without a parent created: session.started (the
//	        TUI creates one at its first prompt, and again at the first
//	        prompt after it starts a new session)
//	prompt  the first part of a user message that is no compaction
//	        request, with no turn open: frame.opening
//	reply   the first answer of the turn: frame.opened
//	end     the turn's last answer completed (a finish other than
//	        tool-calls, or an error), or session.idle with a turn still
//	        open: frame.ending, frame.ended
//	compacted the summary answering a compaction request completed
//	        without an error (session.compacted, which comes later, when
//	        that update was missed): context.compacted, under the id of
//	        the compaction request (the user message whose first part is
//	        the compaction part), trigger auto or manual
//	attention the events that tell whether the session waits for a person
//	        (a permission or a question asked and answered, an error, the
//	        session retrying), as {type, properties} trimmed to the fields
//	        the wrapper's attention reader reads (opencode/attention.go);
//	        no moment. Never awaited: the event handler goes on at once.
//
// Each report is a JSON object (session_id, turn_id, cwd, trigger,
// stop_reason; never a prompt or an answer) handed to the wrapper through
// lifeloop.call (the kit's bridge runtime, adapters/kit/bridge.js, which
// this glue follows in the one file lifeloop writes: the control socket,
// else `lifeloop host-hook --adapter opencode --hook NAME`). Reports go
// one after the other, in the order of the events, and OpenCode's exit
// waits for them (dispose). Every failure is silent: the bridge never
// stops OpenCode.
const call = (hook, input) => lifeloop.call(hook, input);

// The bus events forwarded for attention; those of a session's own turn
// (status, error) only for top-level sessions, a dialog of a sub-agent
// too (the person answers it all the same).
const dialogEvents = new Set([
	"permission.asked", "permission.replied", "permission.v2.asked", "permission.v2.replied",
	"question.asked", "question.replied", "question.rejected",
	"question.v2.asked", "question.v2.replied", "question.v2.rejected",
]);
const turnEvents = new Set(["session.error", "session.status"]);

// frameStatus reports whether a session.status says only what the turn's
// own reports say (busy: a turn runs; idle: it ended): not forwarded, so
// no call goes ahead of a turn's report in the queue. A retry is.
const frameStatus = (type, p) => type === "session.status" && (p.status?.type === "busy" || p.status?.type === "idle");

// A short one-line string of v, or undefined: a name or a question's
// summary, never a body.
const short = (v) => (typeof v === "string" ? v.slice(0, 200) : undefined);

// attentionOf is event trimmed to what the attention reader reads.
const attentionOf = (type, p) => {
	const q = Array.isArray(p.questions) && p.questions.length > 0 ? p.questions[0] : undefined;
	return {
		type,
		properties: {
			sessionID: short(p.sessionID),
			permission: short(p.permission),
			action: short(p.action),
			questions: q ? [{ header: short(q?.header), question: short(q?.question) }] : undefined,
			error: p.error ? { name: short(p.error.name), data: { statusCode: typeof p.error.data?.statusCode === "number" ? p.error.data.statusCode : undefined } } : undefined,
			status: p.status ? { type: short(p.status.type) } : undefined,
		},
	};
};

export const LifeloopBridge = async (ctx) => {
	const cwd = ctx?.directory ?? "";
	// Sub-agent sessions (a parent) are not the conversation lifeloop follows.
	const children = new Set();
	// User messages seen, and those still waiting for their first part.
	const seen = new Set();
	const waiting = new Map(); // message id → session id
	// The open turn of each session: {frame, members, latest, opened}.
	const turns = new Map();
	// The compaction request of each session compacting: {id, auto}.
	const compacting = new Map();
	const compacted = (sid, c) => call("compacted", { session_id: sid, turn_id: c.id, cwd, trigger: c.auto ? "auto" : "manual" });
	const end = (sid, t, trigger, reason) => {
		turns.delete(sid);
		return call("end", { session_id: sid, turn_id: t.frame, cwd, trigger, stop_reason: reason });
	};
	return {
		// OpenCode does not wait for event handlers, but awaits every
		// plugin's dispose before it exits: the reports still on their way
		// (an /exit right after a turn) are sent first.
		dispose: () => lifeloop.settled(),
		event: async ({ event }) => {
			const p = event?.properties ?? {};
			if (dialogEvents.has(event?.type) || (turnEvents.has(event?.type) && !children.has(p.sessionID) && !frameStatus(event.type, p))) {
				call("attention", attentionOf(event.type, p));
				return;
			}
			switch (event?.type) {
				case "session.created":
					if (!p.info?.id) return;
					if (p.info.parentID) {
						children.add(p.info.id);
						return;
					}
					await call("session", { session_id: p.info.id, cwd, trigger: event.type });
					return;
				case "session.updated":
					if (p.info?.parentID) children.add(p.info.id);
					return;
				case "message.updated": {
					const info = p.info;
					if (!info?.id || children.has(info.sessionID)) return;
					if (info.role === "user") {
						if (!seen.has(info.id)) {
							seen.add(info.id);
							waiting.set(info.id, info.sessionID);
						}
						return;
					}
					const c = compacting.get(info.sessionID);
					if (info.role === "assistant" && c && info.parentID === c.id) {
						// The summary answering the compaction request: done
						// once it completed without an error (when OpenCode's
						// database records it too; session.compacted comes later).
						if (!info.time?.completed) return;
						compacting.delete(info.sessionID);
						if (!info.error) await compacted(info.sessionID, c);
						return;
					}
					const t = turns.get(info.sessionID);
					if (info.role !== "assistant" || !t || !t.members.has(info.parentID) || info.summary || info.mode === "compaction") return;
					if (!t.opened) {
						t.opened = true;
						call("reply", { session_id: info.sessionID, turn_id: t.frame, cwd, trigger: event.type });
					}
					if (!info.time?.completed) return;
					if (info.error) {
						await end(info.sessionID, t, event.type, info.error.name === "MessageAbortedError" ? "aborted" : "error");
					} else if (info.finish && info.finish !== "tool-calls" && info.finish !== "unknown" && info.parentID === t.latest) {
						await end(info.sessionID, t, event.type, info.finish);
					}
					return;
				}
				case "message.part.updated": {
					const part = p.part;
					const sid = part ? waiting.get(part.messageID) : undefined;
					if (sid === undefined) return;
					waiting.delete(part.messageID);
					if (part.type === "compaction") {
						compacting.set(sid, { id: part.messageID, auto: part.auto === true });
						return;
					}
					const t = turns.get(sid);
					if (t) {
						// A prompt queued while the turn runs belongs to it.
						t.members.add(part.messageID);
						t.latest = part.messageID;
						return;
					}
					turns.set(sid, { frame: part.messageID, members: new Set([part.messageID]), latest: part.messageID, opened: false });
					await call("prompt", { session_id: sid, turn_id: part.messageID, cwd, trigger: event.type });
					return;
				}
				case "session.compacted": {
					// Reported already at the summary's completion, unless
					// that update was not seen.
					const sid = p.sessionID;
					const c = compacting.get(sid);
					if (!c) return;
					compacting.delete(sid);
					await compacted(sid, c);
					return;
				}
				case "session.idle": {
					const t = turns.get(p.sessionID);
					if (t) await end(p.sessionID, t, event.type, "idle");
					return;
				}
			}
		},
	};
};
