// Expo's server SDK (expo-server-sdk) sending what keel sends, against the
// fake:   node expo.mjs <fake base URL> <access token> <message JSON> <tokens JSON>
// The message (without `to`) goes to every token, in the SDK's chunks;
// then the SDK asks for the receipts of the tickets it got. Prints the
// tickets' statuses and the receipts.
const [baseUrl, accessToken, message, tokens] = process.argv.slice(2);
// The SDK reads its base URL when it loads.
process.env.EXPO_BASE_URL = baseUrl;
const { Expo } = await import('expo-server-sdk');

const expo = new Expo({ accessToken, maxConcurrentRequests: 1 });
const template = JSON.parse(message);
const messages = JSON.parse(tokens).map((to) => {
  if (!Expo.isExpoPushToken(to)) throw new Error(`the SDK refuses the token ${to}`);
  return { ...template, to };
});
const tickets = [];
for (const chunk of expo.chunkPushNotifications(messages)) {
  tickets.push(...(await expo.sendPushNotificationsAsync(chunk)));
}
const ids = tickets.filter((t) => t.status === 'ok').map((t) => t.id);
const receipts = {};
for (const chunk of expo.chunkPushNotificationReceiptIds(ids)) {
  Object.assign(receipts, await expo.getPushNotificationReceiptsAsync(chunk));
}
console.log(JSON.stringify({ tickets: tickets.map((t) => t.status), receipts: Object.keys(receipts).length }));
