// GetStream's JS chat client connecting anonymously and watching the
// channel, as a viewer's page does:
//   node chat.mjs <base URL> <api key>
import { StreamChat } from 'stream-chat';

const [baseURL, key] = process.argv.slice(2);
const client = new StreamChat(key, { baseURL, allowServerSideConnect: true });
const me = await client.connectAnonymousUser();
const channel = client.channel('livestream', 'channel');
const state = await channel.watch();
console.log(JSON.stringify({ connectionId: me?.connection_id, messages: state.messages.length }));
await client.disconnectUser();
