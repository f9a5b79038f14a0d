// GetStream's JS chat client connecting anonymously and watching the
// channel, as a viewer's page does:
//   node chat.mjs <base URL> <api key>
import { StreamChat } from 'stream-chat';

const [baseURL, key] = process.argv.slice(2);
const client = new StreamChat(key, { baseURL, allowServerSideConnect: true });
const me = await client.connectAnonymousUser();
const channel = client.channel('livestream', 'channel');
const state = await channel.watch({ messages: { limit: 50 } });
console.log(JSON.stringify({ connectionId: me?.connection_id, messages: state.messages.length }));
await client.disconnectUser(1000);
// The client's HTTP keep-alive agent would hold Node open for a while.
process.exit(0);
