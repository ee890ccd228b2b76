// The "hosted" scenario: a host that watches and steers a running session
// with the control requests Claude Code 2.1.332 added — get_task_output
// (a shell's output; an agent's messages, paged with after and follow),
// get_context_usage, reload_skills, mcp_set_servers, mcp_toggle,
// mcp_reconnect — and reads the background_tasks_changed and task_updated
// events. It prints what it saw, as driver.mjs does, which calls it.
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export async function hosted({ drive, createSdkMcpServer, tool, z, inbox, out, cwd }) {
  const box = inbox();
  await drive(box, { allowedTools: ['Bash', 'Agent', 'Task', 'mcp__extra__echo', 'Skill'] }, (q) => steer(q, box, { createSdkMcpServer, tool, z, out, cwd }));
}

async function steer(q, box, { createSdkMcpServer, tool, z, out, cwd }) {
  const ask = async (kind, f) => {
    try { out({ kind, value: await f() }); } catch (e) { out({ kind, error: String(e?.message ?? e) }); }
  };
  // follow pages an agent's messages until its last words arrive, then
  // asks once more without follow.
  const follow = async (taskId) => {
    let after;
    for (let i = 0; i < 50; i++) {
      const r = (await q.request({ subtype: 'get_task_output', task_id: taskId, follow: true, ...(after && { after }) })).response;
      out({ kind: 'agent_page', value: r });
      after = r.messages.last ?? after;
      if (JSON.stringify(r.messages.frames).includes('helper done')) break;
    }
    const r = (await q.request({ subtype: 'get_task_output', task_id: taskId, after })).response;
    out({ kind: 'agent_page_after_end', value: r });
  };
  await ask('context_before', () => q.getContextUsage());
  box.push('start background work');
  let results = 0;
  const followers = [];
  for await (const m of q) {
    out({ kind: 'message', message: m });
    if (m.type === 'system' && m.subtype === 'task_started' && m.task_type === 'local_agent') {
      followers.push(follow(m.task_id));
    }
    if (m.type === 'system' && m.subtype === 'task_notification' && m.task_id.startsWith('b')) {
      await ask('shell_output', () => q.getTaskOutput(m.task_id));
    }
    if (m.type !== 'result') continue;
    results++;
    if (results === 2) break;
    await Promise.all(followers);
    await ask('context_after', () => q.getContextUsage());
    const dir = join(cwd, '.cohort', 'skills', 'greeter');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: greeter\ndescription: Greets whoever asks.\n---\nSay hello.\n');
    await ask('skills', () => q.reloadSkills());
    const extra = createSdkMcpServer({ name: 'extra', tools: [tool('echo', 'Echoes its text.', { text: z.string() }, async ({ text }) => {
      out({ kind: 'mcp_call', tool: 'echo', input: { text } });
      return { content: [{ type: 'text', text: `echo: ${text}` }] };
    }, { alwaysLoad: true })] });
    await ask('set_servers', () => q.setMcpServers({ extra }));
    await ask('status_added', () => q.mcpServerStatus());
    await ask('toggle_off', () => q.toggleMcpServer('extra', false));
    await ask('status_off', () => q.mcpServerStatus());
    await ask('toggle_on', () => q.toggleMcpServer('extra', true));
    await ask('reconnect', () => q.reconnectMcpServer('extra'));
    await ask('reconnect_unknown', () => q.reconnectMcpServer('nope'));
    await ask('status_on', () => q.mcpServerStatus());
    box.push('use the new tools');
  }
  box.close();
}
