// discord.js's REST client (@discordjs/rest) posting a message as a bot,
// against the fake:
//   node discord-bot.mjs <API base, e.g. http://host/api> <bot token> <channel id> <body JSON>
import { REST } from '@discordjs/rest';

const [api, token, channel, body] = process.argv.slice(2);
const rest = new REST({ version: '10', api, retries: 0, timeout: 5000 }).setToken(token);
const answer = await rest.post(`/channels/${channel}/messages`, { body: JSON.parse(body) });
console.log(JSON.stringify({ answer }));
