// discord.js's REST client (@discordjs/rest) posting a message to a
// webhook the way discord.js's WebhookClient does, against the fake:
//   node discord.mjs <webhook URL as Discord hands it out> <body JSON>
// The URL is split as WebhookClient splits it (…/webhooks/{id}/{token})
// and the post goes to the API the REST client is pointed at.
import { REST } from '@discordjs/rest';

const [url, body] = process.argv.slice(2);
const m = /^(?<api>.+\/api)\/webhooks\/(?<id>[^/]+)\/(?<token>[^/?]+)/.exec(url);
if (!m) throw new Error(`not a webhook URL: ${url}`);
const { api, id, token } = m.groups;
const rest = new REST({ version: '10', api, retries: 0, timeout: 5000 });
const answer = await rest.post(`/webhooks/${id}/${token}`, {
  body: JSON.parse(body),
  query: new URLSearchParams({ wait: 'true' }),
  auth: false,
});
console.log(JSON.stringify({ answer }));
